import { auditChanges, headerFields, isHeaderField, REDACTED } from './audit';
import { willDisableAt } from '../health/auto-disable';

describe('auditChanges (PRODUCT.md §16)', () => {
  it('lists only the fields that changed, as [before, after]', () => {
    expect(auditChanges({ url: 'https://a.example', retry_enabled: 1 }, { url: 'https://b.example', retry_enabled: 1 })).toEqual({
      url: ['https://a.example', 'https://b.example'],
    });
  });

  it('shows a creation and a deletion with null on the side where the thing did not exist', () => {
    expect(auditChanges(null, { name: 'Acme', active: true })).toEqual({ name: [null, 'Acme'], active: [null, true] });
    expect(auditChanges({ name: 'Acme' }, null)).toEqual({ name: ['Acme', null] });
  });

  it('is empty when nothing changed, and compares objects as JSON', () => {
    expect(auditChanges({ schema: { type: 'object' }, enforce: false }, { schema: { type: 'object' }, enforce: false })).toEqual({});
    expect(auditChanges({ schema: { type: 'object' } }, { schema: { type: 'string' } })).toEqual({
      schema: [{ type: 'object' }, { type: 'string' }],
    });
  });

  it('never writes a header value, yet shows which headers were added, changed or removed', () => {
    const before = headerFields({ 'X-Api-Token': 'secret-1', 'X-Kept': 'same', 'X-Gone': 'old' });
    const after = headerFields({ 'X-Api-Token': 'secret-2', 'X-Kept': 'same', 'X-New': 'new' });
    const changes = auditChanges(before, after, isHeaderField);
    expect(changes).toEqual({
      'headers.X-Api-Token': [REDACTED, REDACTED],
      'headers.X-Gone': [REDACTED, null],
      'headers.X-New': [null, REDACTED],
    });
    expect(JSON.stringify(changes)).not.toMatch(/secret|same|old|new"/);
  });

  it('keeps header names that Object.prototype carries as ordinary fields', () => {
    const changes = auditChanges(null, headerFields(JSON.parse('{"__proto__":"v","constructor":"w"}')), isHeaderField);
    expect(JSON.parse(JSON.stringify(changes))).toEqual({ 'headers.__proto__': [null, REDACTED], 'headers.constructor': [null, REDACTED] });
  });

  it('treats a field missing on one side as null', () => {
    expect(auditChanges({ per_second: null }, { per_second: 20 })).toEqual({ per_second: [null, 20] });
    expect(auditChanges({}, { per_second: null })).toEqual({});
  });
});

describe('willDisableAt (PRODUCT.md §16, warnings)', () => {
  const failingSince = new Date('2026-11-20T10:00:00Z');

  it('is HERALD_DISABLE_AFTER_HOURS after the first failure of an active, failing webhook', () => {
    expect(willDisableAt({ state: 'active', failingSince }, 120)).toEqual(new Date('2026-11-25T10:00:00Z'));
  });

  it('is null while the webhook is not failing, once it is disabled, or when auto-disable is off', () => {
    expect(willDisableAt({ state: 'active', failingSince: null }, 120)).toBeNull();
    expect(willDisableAt({ state: 'disabled', failingSince }, 120)).toBeNull();
    expect(willDisableAt({ state: 'active', failingSince }, 0)).toBeNull();
  });
});
