import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret } from '../credentials/webhook-secrets';
import { signatureHeader } from './signature';
import { webhookBody } from './webhook-body';

describe('Standard Webhooks signing', () => {
  const body = webhookBody({
    id: 'evt_01jd8x6q3k2m4n5p6r7s8t9v0w',
    type: 'acw_start',
    applicationId: 42,
    createdAt: new Date('2026-11-21T12:00:00.000Z'),
    payload: '{"agent":"a-7","seconds":30,"nested":{"ü":"✓"}}',
  });

  it('builds the PRODUCT.md §5.3 body around the stored payload', () => {
    expect(JSON.parse(body)).toEqual({
      id: 'evt_01jd8x6q3k2m4n5p6r7s8t9v0w',
      type: 'acw_start',
      application_id: 42,
      timestamp: '2026-11-21T12:00:00.000Z',
      data: { agent: 'a-7', seconds: 30, nested: { ü: '✓' } },
    });
  });

  it('produces a signature the standardwebhooks package verifies', () => {
    const secret = generateWebhookSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': 'evt_01jd8x6q3k2m4n5p6r7s8t9v0w',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader([secret], 'evt_01jd8x6q3k2m4n5p6r7s8t9v0w', timestamp, body),
    };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(headers['webhook-signature']).toBe(new Webhook(secret).sign(headers['webhook-id'], new Date(timestamp * 1000), body));
  });

  it('keeps each secret’s key apart once cached: the same secret signs the same again, another one differently', () => {
    const [one, other] = [generateWebhookSecret(), generateWebhookSecret()];
    const first = signatureHeader([one], 'evt_x', 1_700_000_000, body);
    expect(signatureHeader([one], 'evt_x', 1_700_000_000, body)).toBe(first);
    expect(signatureHeader([other], 'evt_x', 1_700_000_000, body)).not.toBe(first);
    // Still what the standardwebhooks package signs, from the cached key.
    expect(first).toBe(new Webhook(one).sign('evt_x', new Date(1_700_000_000_000), body));
  });

  it('signs with every valid secret, so either verifies during a rotation', () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signatureHeader([current, previous], 'evt_x', timestamp, body);
    expect(signature.split(' ')).toHaveLength(2);
    const headers = { 'webhook-id': 'evt_x', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
    for (const secret of [current, previous]) expect(() => new Webhook(secret).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
  });
});
