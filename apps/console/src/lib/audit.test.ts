import { describe, expect, it } from 'vitest';
import { ACTION_WORDS, actorWords, AUDIT_ACTIONS, changeValue } from './audit';

describe('audit records in words', () => {
  it('names every action once', () => {
    expect(new Set(AUDIT_ACTIONS).size).toBe(AUDIT_ACTIONS.length);
    expect(new Set(Object.values(ACTION_WORDS)).size).toBe(AUDIT_ACTIONS.length);
  });

  it('names who acted by the credential, never more of a key than its prefix', () => {
    expect(actorWords({ type: 'api_key', id: 'key_01', prefix: 'hk_Xy3kP0' })).toEqual({ who: 'API key', which: 'hk_Xy3kP0' });
    expect(actorWords({ type: 'admin_key', id: 'key_bootstrap_admin', prefix: 'env:1a2b3c4d' })).toEqual({
      who: 'Operator key',
      which: 'env:1a2b3c4d',
    });
    expect(actorWords({ type: 'portal_link', id: 'ptl_01', prefix: null })).toEqual({ who: 'Portal link', which: 'ptl_01' });
    expect(actorWords({ type: 'system', id: 'auto-disable', prefix: null })).toEqual({ who: 'Herald', which: 'auto-disable' });
  });

  it('shows a value that did not exist as "none", text as it is and anything else as JSON', () => {
    expect(changeValue(null)).toBe('none');
    expect(changeValue('https://example.com/hook')).toBe('https://example.com/hook');
    expect(changeValue(0)).toBe('0');
    expect(changeValue(false)).toBe('false');
    expect(changeValue({ type: 'object' })).toBe('{"type":"object"}');
  });
});
