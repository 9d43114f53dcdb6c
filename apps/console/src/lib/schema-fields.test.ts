import { describe, expect, it } from 'vitest';
import { schemaFieldRows } from './schema-fields';

describe('schemaFieldRows', () => {
  it('lists each field in the order written, nested ones by path, with its type, whether required, its rules and description', () => {
    const rows = schemaFieldRows({
      type: 'object',
      required: ['call_id', 'team'],
      properties: {
        call_id: { type: 'string', pattern: '^c-[0-9]+$', description: 'The call.' },
        direction: { enum: ['inbound', 'outbound'] },
        seconds: { type: 'integer', minimum: 0, maximum: 86400 },
        team: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
        tags: { type: 'array', maxItems: 10, items: { type: 'string' } },
        notes: { type: ['string', 'null'] },
      },
    });
    expect(rows).toEqual([
      { path: 'call_id', type: 'string', required: true, rules: ['matches ^c-[0-9]+$'], description: 'The call.' },
      { path: 'direction', type: 'one of "inbound", "outbound"', required: false, rules: [], description: '' },
      { path: 'seconds', type: 'integer', required: false, rules: ['≥ 0', '≤ 86400'], description: '' },
      { path: 'team', type: 'object', required: true, rules: [], description: '' },
      { path: 'team.id', type: 'string', required: true, rules: [], description: '' },
      { path: 'tags', type: 'array of string', required: false, rules: ['at most 10 items'], description: '' },
      { path: 'notes', type: 'string or null', required: false, rules: [], description: '' },
    ]);
  });

  it('follows local references, items of objects, and stops at a reference that loops', () => {
    const rows = schemaFieldRows({
      type: 'object',
      properties: { agent: { $ref: '#/$defs/agent' }, calls: { type: 'array', items: { $ref: '#/$defs/call' } } },
      $defs: {
        agent: { type: 'object', properties: { id: { type: 'string' }, manager: { $ref: '#/$defs/agent' } } },
        call: { type: 'object', properties: { id: { type: 'string' } } },
      },
    });
    expect(rows.map((row) => `${row.path}: ${row.type}`)).toEqual([
      'agent: object',
      'agent.id: string',
      'agent.manager: object',
      'calls: array',
      'calls[].id: string',
    ]);
  });
});
