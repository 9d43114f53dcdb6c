import { Answer } from '../api/herald-api';

/** A table column: its heading and how to read it from an item. */
export interface Column {
  header: string;
  field: string;
}

export const column = (header: string, field = header.toLowerCase().replace(/ /g, '_')): Column => ({ header, field });

export interface PrintOptions {
  /** --json: the api's `data` as JSON on stdout, and nothing else there. */
  json: boolean;
}

/**
 * A list: with --json `{ data, next_cursor }`; otherwise an aligned table on stdout, and on
 * stderr what a person needs besides (an empty list said in words, how to get the next page).
 */
export function printList(answer: Answer, columns: Column[], options: PrintOptions & { noun: string }): void {
  const items = Array.isArray(answer.data) ? (answer.data as Record<string, unknown>[]) : [];
  const nextCursor = answer.next_cursor ?? null;
  if (options.json) {
    writeJson({ data: items, next_cursor: nextCursor });
    return;
  }
  if (items.length === 0) process.stderr.write(`herald: no ${options.noun}\n`);
  else process.stdout.write(table(items, columns));
  if (nextCursor !== null) process.stderr.write(`herald: more ${options.noun} on the next page: --cursor ${nextCursor}\n`);
}

/**
 * One item: with --json the api's `data`; otherwise `key: value` lines (nested objects as
 * `parent.key`), and each list of objects named in `tables` as a table after them.
 */
export function printItem(answer: Answer, options: PrintOptions & { tables?: Record<string, Column[]> }): void {
  if (options.json) {
    writeJson(answer.data);
    return;
  }
  const data = (answer.data ?? {}) as Record<string, unknown>;
  const tables = options.tables ?? {};
  const lines = flatten(Object.fromEntries(Object.entries(data).filter(([key]) => !(key in tables))));
  const width = Math.max(0, ...lines.map(([key]) => key.length));
  let out = lines.map(([key, value]) => `${`${key}:`.padEnd(width + 1)} ${value}`.trimEnd()).join('\n') + '\n';
  for (const [key, columns] of Object.entries(tables)) {
    const rows = Array.isArray(data[key]) ? (data[key] as Record<string, unknown>[]) : [];
    out += `\n${key}:${rows.length === 0 ? ' -\n' : `\n${table(rows, columns)}`}`;
  }
  process.stdout.write(out);
}

function writeJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Columns two spaces apart, padded to the widest cell; no trailing spaces. */
function table(items: Record<string, unknown>[], columns: Column[]): string {
  const rows = [columns.map((c) => c.header), ...items.map((item) => columns.map((c) => cell(item[c.field])))];
  const widths = columns.map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  return (
    rows
      .map((row) =>
        row
          .map((text, i) => text.padEnd(widths[i]))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

function flatten(value: Record<string, unknown>, prefix = ''): [string, string][] {
  return Object.entries(value).flatMap(([key, inner]): [string, string][] =>
    isPlainObject(inner) && Object.keys(inner).length > 0 ? flatten(inner, `${prefix}${key}.`) : [[`${prefix}${key}`, cell(inner)]],
  );
}

/** How a value reads in a table or after `key:`: absent or empty as `-`, control characters escaped so a terminal shows them, not obeys them. */
function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(cell).join(', ');
  if (isPlainObject(value)) return Object.keys(value).length === 0 ? '-' : JSON.stringify(value);
  return String(value).replace(/\p{Cc}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
