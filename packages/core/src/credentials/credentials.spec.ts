import { createHash } from 'node:crypto';
import { API_KEY_PATTERN, hashApiKey, issueApiKey } from './api-keys';
import { generateWebhookSecret } from './webhook-secrets';

describe('API keys', () => {
  it('are hk_ + 43 url-safe characters of 32 random bytes, with a display prefix and a SHA-256 hash', () => {
    const bytes = Buffer.alloc(32, 0xfb);
    const issued = issueApiKey(() => bytes);
    expect(issued.key).toBe(`hk_${bytes.toString('base64url')}`);
    expect(issued.key).toMatch(API_KEY_PATTERN);
    expect(issued.prefix).toBe(issued.key.slice(0, 9));
    expect(issued.hash).toBe(createHash('sha256').update(issued.key).digest('hex'));
    expect(hashApiKey(issued.key)).toBe(issued.hash);
  });

  it('differ each time with real randomness', () => {
    expect(issueApiKey().key).not.toBe(issueApiKey().key);
  });
});

describe('webhook secrets', () => {
  it('are whsec_ + base64 of 32 random bytes (Standard Webhooks)', () => {
    const secret = generateWebhookSecret(() => Buffer.alloc(32, 1));
    expect(secret).toBe(`whsec_${Buffer.alloc(32, 1).toString('base64')}`);
    expect(Buffer.from(generateWebhookSecret().slice(6), 'base64')).toHaveLength(32);
  });
});
