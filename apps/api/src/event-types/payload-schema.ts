import Ajv2020, { ErrorObject, KeywordDefinition, Options, ValidateFunction } from 'ajv/dist/2020';
import { RE2JS } from 're2js';

/**
 * Event-type schemas (PRODUCT.md §15): JSON Schema draft 2020-12 through Ajv, made safe for
 * schemas an operator sends over HTTP, which Ajv itself treats as trusted code
 * (ajv.js.org/security). What a hostile or careless schema could do, and what stops it:
 *
 * - fetch or read another document: each schema compiles in an Ajv instance of its own that
 *   knows no other schema (not even the meta-schemas), and Ajv's synchronous `compile` never
 *   loads anything, so any reference outside the document is a compile error;
 * - hang the api on a pattern (`^(a+)+$` takes seconds on 30 characters in V8): every `pattern`
 *   and `patternProperties` runs on RE2 (re2js), linear in the string; lookaround and
 *   backreferences, which need backtracking, are refused, and so is a pattern whose program is
 *   larger than MAX_PATTERN_PROGRAM_SIZE;
 * - make `uniqueItems` quadratic (Ajv compares object items pairwise: 20,000 of them took 7 s):
 *   replaced by a linear check on canonical JSON;
 * - recurse without end (`$ref` to itself in place): the validator's RangeError is caught and
 *   answered as a mismatch, never a 500;
 * - be huge or deep: the DTO caps it at 64 KiB and the body parser at 32 levels, and a large
 *   definition referenced many times is compiled once, not copied into each place;
 *
 * `format` is an annotation, as the 2020-12 default vocabulary says; unknown keywords are
 * refused, since a typo (`requried`) would otherwise silently check nothing.
 */

export const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** re2js's "very approximate cost" of a pattern: `[a-z0-9._-]{1,64}` is about 150, `\p{L}{1,1000}` about 6,000. */
export const MAX_PATTERN_PROGRAM_SIZE = 10_000;

/** A place in the schema (its problems) or in the payload (a mismatch), as a JSON pointer: `/agent_id`, `` for the root. */
export interface SchemaProblem {
  pointer: string;
  message: string;
}

/** Null when the payload matches; else its problems, in Ajv's order. */
export type PayloadValidator = (payload: unknown) => SchemaProblem[] | null;

export type CompiledSchema = { ok: true; validate: PayloadValidator } | { ok: false; problems: SchemaProblem[] };

const COMMON_OPTIONS: Options = {
  strict: true,
  // Type inference warnings and tuple hints are advice for authors, written to the console.
  strictTypes: false,
  strictTuples: false,
  // `required` may name properties that `properties` does not describe.
  strictRequired: false,
  logger: false,
  validateFormats: false,
  // `required: ["constructor"]` must not be met by Object.prototype.constructor.
  ownProperties: true,
  // $data lets data choose the schema's values (a pattern among them): never.
  $data: false,
};

/** Knows the 2020-12 meta-schema; checks schemas, compiles none of the operators'. */
const metaValidator = new Ajv2020({ ...COMMON_OPTIONS, allErrors: true });

export function compilePayloadSchema(schema: Record<string, unknown>): CompiledSchema {
  const declared = schema.$schema;
  if (declared !== undefined && declared !== DRAFT_2020_12 && declared !== `${DRAFT_2020_12}#`) {
    return refused('/$schema', `must be "${DRAFT_2020_12}" or absent: Herald checks payloads with draft 2020-12`);
  }
  if (!metaValidator.validateSchema(schema)) {
    return { ok: false, problems: problemsOf(metaValidator.errors ?? []) };
  }
  const patternProblems = checkPatternsAndNames(schema);
  if (patternProblems.length > 0) return { ok: false, problems: patternProblems };

  let validate: ValidateFunction;
  try {
    validate = isolatedCompiler().compile(schema);
  } catch (error) {
    return refused('', compileErrorMessage(error as Error));
  }
  return {
    ok: true,
    validate: (payload) => {
      try {
        if (validate(payload)) return null;
      } catch (error) {
        // A schema whose references loop in place (`$defs/a` is `{ "$ref": "#/$defs/a" }`) recurses until the stack ends.
        return [{ pointer: '', message: `the schema could not be evaluated on this payload (${(error as Error).message})` }];
      }
      return problemsOf(validate.errors ?? []);
    },
  };
}

/** An Ajv that knows nothing but the schema it compiles: no meta-schemas, no other schema. */
function isolatedCompiler(): Ajv2020 {
  const ajv = new Ajv2020({
    ...COMMON_OPTIONS,
    allErrors: true,
    meta: false,
    validateSchema: false, // done against metaValidator
    addUsedSchema: false,
    // Ajv copies a referenced schema into every place that references it, whatever its size: one
    // 30 KiB definition referenced a thousand times would be 30 MB of code. Only small ones are.
    inlineRefs: 20,
    code: { regExp: linearRegExp },
  });
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword(linearUniqueItems);
  // Ajv resolves `$anchor` but does not list it as a keyword, so strict mode would call it unknown.
  ajv.addKeyword('$anchor');
  return ajv;
}

function compileErrorMessage(error: Error): string {
  if (error instanceof RangeError) return `its references loop without ever reaching a value (${error.message})`;
  if (error.constructor.name === 'MissingRefError') {
    return `${error.message}: references resolve only inside this schema, and Herald fetches nothing`;
  }
  return error.message;
}

interface RegExpLike {
  test(value: string): boolean;
}

/**
 * Ajv's regular-expression engine: RE2, linear in the string. Ajv caches compiled patterns by
 * `toString()`, so each must say which pattern it is.
 */
function linearRegExp(pattern: string): RegExpLike {
  const compiled = compilePattern(pattern);
  return { test: (value: string) => compiled.test(value), toString: () => `re2:${pattern}` } as RegExpLike;
}
linearRegExp.code = 'linearRegExp'; // named in generated code only by Ajv's standalone mode, which Herald does not use

function compilePattern(pattern: string): RE2JS {
  return RE2JS.compile(RE2JS.translateRegExp(pattern));
}

/**
 * Every `pattern` and `patternProperties` key, compiled beforehand so a refusal names its place;
 * and the property names Ajv would silently skip.
 */
function checkPatternsAndNames(schema: unknown): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const check = (pattern: string, pointer: string): void => {
    try {
      const size = compilePattern(pattern).programSize();
      if (size > MAX_PATTERN_PROGRAM_SIZE) {
        problems.push({
          pointer,
          message: `the pattern is too large to match quickly (${size} > ${MAX_PATTERN_PROGRAM_SIZE}); simplify it`,
        });
      }
    } catch (error) {
      problems.push({
        pointer,
        message: `${(error as Error).message} (patterns use RE2 syntax, which matches in linear time: no lookaround or backreferences)`,
      });
    }
  };
  walkSchemaObjects(schema, '', (node, pointer) => {
    for (const keyword of ['properties', 'dependentSchemas', 'dependentRequired']) {
      const map = node[keyword];
      if (isObject(map) && Object.hasOwn(map, '__proto__')) {
        problems.push({
          pointer: `${pointer}/${keyword}/__proto__`,
          message: 'Ajv skips a property named __proto__ here, so it would check nothing; use patternProperties "^__proto__$"',
        });
      }
    }
    if (typeof node.pattern === 'string') check(node.pattern, `${pointer}/pattern`);
    const patternProperties = node.patternProperties;
    if (isObject(patternProperties)) {
      for (const key of Object.keys(patternProperties)) check(key, `${pointer}/patternProperties/${escapePointerToken(key)}`);
    }
  });
  return problems;
}

/**
 * Every object in the schema that sits where a subschema can be, with its pointer. It follows
 * every object and array, so a `pattern` inside `properties` of `$defs` is found; an object
 * under `const`, `enum`, `default` or `examples` is data, not a schema, and is skipped.
 */
function walkSchemaObjects(node: unknown, pointer: string, visit: (node: Record<string, unknown>, pointer: string) => void): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => walkSchemaObjects(item, `${pointer}/${i}`, visit));
    return;
  }
  if (!isObject(node)) return;
  visit(node, pointer);
  for (const [key, value] of Object.entries(node)) {
    if (DATA_KEYWORDS.has(key)) continue;
    walkSchemaObjects(value, `${pointer}/${escapePointerToken(key)}`, visit);
  }
}

const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

/**
 * uniqueItems in one pass: each item's canonical JSON (keys sorted) in a Map. Ajv's own compares
 * object and array items pairwise, quadratic in a payload that may hold 80,000 of them; and its
 * fast path for strings keys a plain object, where an item `"__proto__"` is never seen twice.
 */
const linearUniqueItems: KeywordDefinition = {
  keyword: 'uniqueItems',
  type: 'array',
  schemaType: 'boolean',
  errors: true,
  validate: function uniqueItems(this: unknown, unique: boolean, items: unknown[]): boolean {
    if (!unique) return true;
    const seen = new Map<string, number>();
    for (let i = 0; i < items.length; i++) {
      const key = canonicalJson(items[i]);
      const first = seen.get(key);
      if (first !== undefined) {
        (uniqueItems as { errors?: Partial<ErrorObject>[] }).errors = [
          {
            keyword: 'uniqueItems',
            params: { i, j: first },
            message: `must NOT have duplicate items (items ${first} and ${i} are identical)`,
          },
        ];
        return false;
      }
      seen.set(key, i);
    }
    return true;
  },
};

/** JSON with object keys sorted: two values JSON Schema calls equal have the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Ajv's errors as pointers to the place each is about: a missing required property, or one that
 * is not allowed, is named itself (`/agent_id`) rather than by the object that lacks or has it.
 */
function problemsOf(errors: readonly ErrorObject[]): SchemaProblem[] {
  return errors.map((error) => {
    const params = error.params as Record<string, unknown>;
    const at = (name: unknown) => `${error.instancePath}/${escapePointerToken(String(name))}`;
    switch (error.keyword) {
      case 'required':
      case 'dependentRequired':
        return { pointer: at(params.missingProperty), message: 'is required' };
      case 'additionalProperties':
        return { pointer: at(params.additionalProperty), message: 'is not allowed (additionalProperties)' };
      case 'unevaluatedProperties':
        return { pointer: at(params.unevaluatedProperty), message: 'is not allowed (unevaluatedProperties)' };
      case 'propertyNames':
        return { pointer: at(params.propertyName), message: 'is not an allowed property name (propertyNames)' };
      default:
        return { pointer: error.instancePath, message: error.message ?? `fails ${error.keyword}` };
    }
  });
}

function refused(pointer: string, message: string): CompiledSchema {
  return { ok: false, problems: [{ pointer, message }] };
}

export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
