import { canonicalJson, compilePayloadSchema, PayloadValidator, SchemaProblem } from './payload-schema';

function compiled(schema: Record<string, unknown>): PayloadValidator {
  const result = compilePayloadSchema(schema);
  if (!result.ok) throw new Error(`expected the schema to compile: ${JSON.stringify(result.problems)}`);
  return result.validate;
}

function problemsOf(schema: Record<string, unknown>): SchemaProblem[] {
  const result = compilePayloadSchema(schema);
  if (result.ok) throw new Error('expected the schema to be refused');
  return result.problems;
}

/** Milliseconds `work` takes. */
function timed(work: () => void): number {
  const started = performance.now();
  work();
  return performance.now() - started;
}

describe('compilePayloadSchema', () => {
  const agentSchema = {
    type: 'object',
    required: ['agent_id', 'call_id'],
    additionalProperties: false,
    properties: { agent_id: { type: 'string', minLength: 1 }, call_id: { type: 'string' }, seconds: { type: 'integer', maximum: 3600 } },
  };

  it('passes a matching payload and names each problem of another by JSON pointer', () => {
    const validate = compiled(agentSchema);
    expect(validate({ agent_id: 'a-17', call_id: 'c-1', seconds: 5 })).toBeNull();
    expect(validate({ agent_id: 17, seconds: 7200, extra: true })).toEqual([
      { pointer: '/call_id', message: 'is required' },
      { pointer: '/extra', message: 'is not allowed (additionalProperties)' },
      { pointer: '/agent_id', message: 'must be string' },
      { pointer: '/seconds', message: 'must be <= 3600' },
    ]);
  });

  it('escapes "/" and "~" in pointers, and reports the root as the empty pointer', () => {
    const validate = compiled({ type: 'object', required: ['a/b', 'c~d'] });
    expect(validate({})).toEqual([
      { pointer: '/a~1b', message: 'is required' },
      { pointer: '/c~0d', message: 'is required' },
    ]);
    expect(compiled({ type: 'object' })([])).toEqual([{ pointer: '', message: 'must be object' }]);
  });

  it("treats Object.prototype's names as ordinary property names", () => {
    // Parsed, as a request body is: in an object literal `__proto__:` would set the prototype.
    const validate = compiled(
      JSON.parse(
        '{"type":"object","required":["constructor","__proto__"],"properties":{"constructor":{"type":"string"}},"patternProperties":{"^__proto__$":{"type":"integer"}}}',
      ),
    );
    expect(validate({})).toEqual([
      { pointer: '/constructor', message: 'is required' },
      { pointer: '/__proto__', message: 'is required' },
    ]);
    expect(validate(JSON.parse('{"constructor":"c","__proto__":1}'))).toBeNull();
    expect(validate(JSON.parse('{"constructor":"c","__proto__":"x"}'))).toEqual([{ pointer: '/__proto__', message: 'must be integer' }]);

    const closed = compiled({ type: 'object', properties: { a: {} }, additionalProperties: false });
    expect(closed(JSON.parse('{"a":1,"__proto__":{}}'))).toEqual([
      { pointer: '/__proto__', message: 'is not allowed (additionalProperties)' },
    ]);
  });

  it('refuses `properties` naming __proto__, which Ajv would skip, and points to patternProperties', () => {
    const [problem] = problemsOf(JSON.parse('{"type":"object","properties":{"__proto__":{"type":"integer"}}}'));
    expect(problem).toEqual({ pointer: '/properties/__proto__', message: expect.stringContaining('patternProperties') });
  });

  it('refuses a schema the meta-schema refuses, naming the place', () => {
    expect(problemsOf({ type: 'objet' })).toContainEqual({ pointer: '/type', message: 'must be equal to one of the allowed values' });
    expect(problemsOf({ properties: { n: { minimum: 'one' } } })).toContainEqual({
      pointer: '/properties/n/minimum',
      message: 'must be number',
    });
  });

  it('refuses unknown keywords (a typo would check nothing) and other drafts', () => {
    expect(problemsOf({ type: 'object', requried: ['a'] })).toEqual([{ pointer: '', message: 'strict mode: unknown keyword: "requried"' }]);
    expect(problemsOf({ $schema: 'http://json-schema.org/draft-07/schema#' })[0].pointer).toBe('/$schema');
    expect(compilePayloadSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' }).ok).toBe(true);
  });

  it('resolves references inside the document and refuses every other, fetching nothing', () => {
    const validate = compiled({
      type: 'object',
      properties: { agent: { $ref: '#/$defs/agent' }, team: { $ref: '#team' } },
      $defs: { agent: { type: 'string' }, team: { $anchor: 'team', type: 'integer' } },
    });
    expect(validate({ agent: 'a', team: 1 })).toBeNull();
    expect(validate({ agent: 1, team: 'x' })).toHaveLength(2);

    for (const $ref of [
      'https://json-schema.org/draft/2020-12/schema', // known to Ajv, but another document
      'https://example.com/agent.json',
      'agent.json',
      'file:///etc/passwd',
      '#/$defs/missing',
    ]) {
      const [problem] = problemsOf({ type: 'object', properties: { a: { $ref } } });
      expect(problem.message).toMatch(/can't resolve reference/);
    }
  });

  it('matches patterns in linear time: a catastrophic pattern on 256 KiB answers at once', () => {
    const validate = compiled({ type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$' } } });
    const hostile = { a: `${'a'.repeat(256 * 1024)}!` };
    let problems: SchemaProblem[] | null = null;
    expect(timed(() => (problems = validate(hostile)))).toBeLessThan(1_000);
    expect(problems).toEqual([{ pointer: '/a', message: 'must match pattern "^(a+)+$"' }]);
    expect(validate({ a: 'aaaa' })).toBeNull();
  });

  it('refuses patterns that need backtracking, or are too large, naming each', () => {
    const problems = problemsOf({
      type: 'object',
      properties: { a: { type: 'string', pattern: '^(?=a)a$' }, b: { type: 'string', pattern: '^(a)\\1$' } },
      patternProperties: { '(?<!x)y': {}, '^((a{1000}){1000})$': {} },
    });
    expect(problems.map((p) => p.pointer).sort()).toEqual([
      '/patternProperties/(?<!x)y',
      '/patternProperties/^((a{1000}){1000})$',
      '/properties/a/pattern',
      '/properties/b/pattern',
    ]);
    expect(problems.find((p) => p.pointer === '/properties/a/pattern')?.message).toMatch(/RE2 syntax/);
  });

  it('keeps patterns working as JSON Schema writes them (unicode classes, anchors, unanchored search)', () => {
    const validate = compiled({
      type: 'object',
      patternProperties: { '^x_': { type: 'integer' } },
      properties: { n: { pattern: '\\p{L}+' } },
    });
    expect(validate({ x_a: 1, n: '12é' })).toBeNull();
    expect(validate({ x_a: 'no', n: '123' })).toEqual([
      { pointer: '/n', message: 'must match pattern "\\p{L}+"' },
      { pointer: '/x_a', message: 'must be integer' },
    ]);
  });

  it('checks uniqueItems in linear time, by JSON value (key order aside)', () => {
    const validate = compiled({ type: 'array', uniqueItems: true });
    const many = Array.from({ length: 80_000 }, (_, i) => ({ i }));
    expect(timed(() => expect(validate(many)).toBeNull())).toBeLessThan(1_000);
    expect(
      validate([
        { a: 1, b: [2] },
        { b: [2], a: 1 },
      ]),
    ).toEqual([{ pointer: '', message: 'must NOT have duplicate items (items 0 and 1 are identical)' }]);
    expect(validate(['__proto__', '__proto__'])).toHaveLength(1);
    expect(validate([1, '1', [1], { 1: 1 }])).toBeNull();
  });

  it('refuses references that loop in place, or answers them as a mismatch when they compile: never a crash', () => {
    const [problem] = problemsOf({ type: 'object', properties: { x: { $ref: '#/$defs/a' } }, $defs: { a: { $ref: '#/$defs/a' } } });
    expect(problem.message).toMatch(/references loop/);

    const validate = compiled({
      type: 'object',
      properties: { x: { $ref: '#/$defs/a' } },
      $defs: { a: { type: 'integer', $ref: '#/$defs/a' } },
    });
    expect(validate({})).toBeNull();
    expect(validate({ x: 1 })).toEqual([{ pointer: '', message: expect.stringMatching(/could not be evaluated.*call stack/) }]);
  });

  it('treats format as an annotation, as draft 2020-12 does by default', () => {
    expect(compiled({ type: 'string', format: 'email' })('not an email')).toBeNull();
    expect(compiled({ type: 'string', format: 'made-up' })('x')).toBeNull();
  });

  it('compiles a 64 KiB schema of 1,000 properties quickly', () => {
    const properties = Object.fromEntries(
      Array.from({ length: 1_000 }, (_, i) => [
        `field_${i}`,
        { type: 'string', maxLength: 64, pattern: '^[a-z0-9-]+$', description: 'x'.repeat(8) },
      ]),
    );
    const schema = { type: 'object', properties, required: Object.keys(properties).slice(0, 100) };
    expect(JSON.stringify(schema).length).toBeLessThan(110 * 1024);
    expect(timed(() => compiled(schema))).toBeLessThan(3_000);
  });

  it('compiles a large definition referenced a thousand times once, not a thousand times', () => {
    const big = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`f${i}`, { type: 'integer', minimum: i }]));
    const schema = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`p${i}`, { $ref: '#/$defs/big' }])),
      $defs: { big: { type: 'object', properties: big } },
    };
    expect(JSON.stringify(schema).length).toBeLessThan(64 * 1024);
    let validate: PayloadValidator | undefined;
    expect(timed(() => (validate = compiled(schema)))).toBeLessThan(3_000);
    expect(validate!({ p1: { f3: 2 } })).toEqual([{ pointer: '/p1/f3', message: 'must be >= 3' }]);
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every level and keeps arrays in order', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe('{"a":[{"c":2,"d":1}],"b":1}');
    expect(canonicalJson(JSON.parse('{"__proto__":1}'))).toBe('{"__proto__":1}');
  });
});
