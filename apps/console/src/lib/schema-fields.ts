/**
 * An event type's JSON Schema as rows a receiver's owner can read (PRODUCT.md §15): one per
 * field, its path in the payload (`team.id`, `tags[]`), its type, whether it is required, its
 * limits in words and its description. Local references (`#/$defs/…`) are followed; anything
 * the table cannot say plainly (`oneOf`, `if`…) is left to the schema itself, shown beside it.
 */
export interface SchemaFieldRow {
  path: string;
  type: string;
  required: boolean;
  rules: string[];
  description: string;
}

type Schema = Record<string, unknown>;

/** Enough for any payload a person reads; a schema past it is shown in full beside the table. */
const MAX_ROWS = 200;
const MAX_DEPTH = 6;

export function schemaFieldRows(root: Schema): SchemaFieldRow[] {
  const rows: SchemaFieldRow[] = [];
  const visit = (schema: Schema, prefix: string, depth: number, seen: Set<Schema>): void => {
    const resolved = resolveRef(root, schema);
    if (depth > MAX_DEPTH || seen.has(resolved)) return;
    const inner = new Set(seen).add(resolved);
    const properties = isObject(resolved.properties) ? resolved.properties : {};
    const required = Array.isArray(resolved.required) ? resolved.required.map(String) : [];
    for (const [name, raw] of Object.entries(properties)) {
      if (rows.length >= MAX_ROWS) return;
      const property = isObject(raw) ? resolveRef(root, raw) : {};
      const path = prefix ? `${prefix}.${name}` : name;
      rows.push({
        path,
        type: typeOf(property),
        required: required.includes(name),
        rules: rulesOf(property),
        description: typeof property.description === 'string' ? property.description : '',
      });
      visit(property, path, depth + 1, inner);
      const items = isObject(property.items) ? resolveRef(root, property.items) : null;
      if (items && isObject(items.properties)) visit(items, `${path}[]`, depth + 1, inner);
    }
  };
  visit(root, '', 0, new Set());
  return rows;
}

function resolveRef(root: Schema, schema: Schema): Schema {
  let current = schema;
  for (let hops = 0; hops < 8 && typeof current.$ref === 'string' && current.$ref.startsWith('#/'); hops++) {
    const target = current.$ref
      .slice(2)
      .split('/')
      .map((token) => decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>(
        (node, token) => (isObject(node) || Array.isArray(node) ? (node as Record<string, unknown>)[token] : undefined),
        root,
      );
    if (!isObject(target)) break;
    current = target;
  }
  return current;
}

function typeOf(schema: Schema): string {
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((value) => JSON.stringify(value)).join(', ')}`;
  if ('const' in schema) return `exactly ${JSON.stringify(schema.const)}`;
  const types = Array.isArray(schema.type) ? schema.type.map(String) : typeof schema.type === 'string' ? [schema.type] : [];
  const items = isObject(schema.items) && typeof schema.items.type === 'string' ? ` of ${schema.items.type}` : '';
  if (types.length === 0) return Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf) ? 'see schema' : 'any';
  return types.map((type) => (type === 'array' ? `array${items}` : type)).join(' or ');
}

const RULES: [string, (value: unknown) => string][] = [
  ['minLength', (v) => `at least ${v} characters`],
  ['maxLength', (v) => `at most ${v} characters`],
  ['pattern', (v) => `matches ${v}`],
  ['format', (v) => `format ${v}`],
  ['minimum', (v) => `≥ ${v}`],
  ['exclusiveMinimum', (v) => `> ${v}`],
  ['maximum', (v) => `≤ ${v}`],
  ['exclusiveMaximum', (v) => `< ${v}`],
  ['multipleOf', (v) => `a multiple of ${v}`],
  ['minItems', (v) => `at least ${v} items`],
  ['maxItems', (v) => `at most ${v} items`],
  ['uniqueItems', (v) => (v === true ? 'no duplicates' : '')],
  ['default', (v) => `default ${JSON.stringify(v)}`],
];

function rulesOf(schema: Schema): string[] {
  return RULES.filter(([keyword]) => keyword in schema)
    .map(([keyword, say]) => say(schema[keyword]))
    .filter((rule) => rule !== '');
}

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
