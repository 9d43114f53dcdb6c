/**
 * MongoDB's rules for the values a dotted path names in a document, and for comparing them, on
 * JSON (PRODUCT.md §14: the operators have MongoDB's semantics on the event's payload).
 * Only own properties are read: `constructor` or `__proto__` in a path is an ordinary name.
 */

/** What a path yields where the document has nothing: `{ a: null }` and `$exists` match on it. */
export const MISSING: unique symbol = Symbol('missing');
export type PathValue = unknown | typeof MISSING;

const hasOwn = Object.prototype.hasOwnProperty;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Calls `visit` with every value MongoDB's matcher produces for `parts` in `document` (its
 * ElementIterator), stopping at the first `true`. Starting from an object, fields are looked up
 * until the path ends (that value, or MISSING where a field is absent or a scalar is in the way)
 * or an array is reached, which is then traversed (forEachInArray).
 */
export function someValueAt(document: unknown, parts: readonly string[], visit: (value: PathValue) => boolean): boolean {
  return someFromObject(document, parts, 0, visit);
}

function someFromObject(start: unknown, parts: readonly string[], from: number, visit: (value: PathValue) => boolean): boolean {
  let current = start;
  for (let i = from; i < parts.length; i++) {
    if (!isObject(current) || !hasOwn.call(current, parts[i])) return visit(MISSING);
    const next = current[parts[i]];
    if (Array.isArray(next)) return someInArray(next, parts, i + 1, visit);
    current = next;
  }
  return visit(current);
}

/**
 * An array met at `parts[from - 1]`. Where the path ends there, each element and then the array
 * itself. Otherwise each object element is searched for the rest of the path; and when the next
 * part is a number, the element at that index is taken as well (the element itself where the
 * path ends after the number; the rest of the path in it when it is an object or an array).
 * Other elements yield nothing, not even MISSING: `{ "a.b": null }` does not match `{ a: [1] }`.
 */
function someInArray(array: readonly unknown[], parts: readonly string[], from: number, visit: (value: PathValue) => boolean): boolean {
  if (from === parts.length) {
    for (const element of array) if (visit(element)) return true;
    return visit(array);
  }
  const next = parts[from];
  const index = isArrayIndex(next) ? next : null;
  for (let i = 0; i < array.length; i++) {
    const element = array[i];
    const atIndex = index !== null && String(i) === index;
    if (isObject(element)) {
      if (someFromObject(element, parts, from, visit)) return true;
      if (atIndex && (from + 1 === parts.length ? visit(element) : someFromObject(element, parts, from + 1, visit))) return true;
    } else if (atIndex) {
      if (from + 1 === parts.length) {
        if (visit(element)) return true;
      } else if (Array.isArray(element) && someInArray(element, parts, from + 1, visit)) {
        return true;
      }
    }
  }
  return false;
}

function isArrayIndex(part: string): boolean {
  return part.length > 0 && /^[0-9]+$/.test(part);
}

/**
 * MongoDB's equality of two JSON values: numbers by value, objects field by field in their order
 * (`{a:1,b:2}` is not `{b:2,a:1}`), arrays element by element; values of different types are
 * never equal (`1` is not `"1"` or `true`).
 */
export function jsonEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEquals(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  for (let i = 0; i < aKeys.length; i++) {
    if (aKeys[i] !== bKeys[i]) return false;
    if (!jsonEquals((a as Record<string, unknown>)[aKeys[i]], (b as Record<string, unknown>)[bKeys[i]])) return false;
  }
  return true;
}

/**
 * The order of `$gt`, `$gte`, `$lt` and `$lte`, or null when MongoDB would not compare the two
 * (type bracketing: a number only against a number, a string only against a string). Strings
 * compare by code point, as MongoDB's binary comparison of UTF-8 does (JavaScript's `<` compares
 * UTF-16 units, which puts U+FF5E after U+1F600).
 */
export function compareJson(value: unknown, bound: number | string): number | null {
  if (typeof bound === 'number') return typeof value === 'number' ? (value < bound ? -1 : value > bound ? 1 : 0) : null;
  return typeof value === 'string' ? compareByCodePoint(value, bound) : null;
}

export function compareByCodePoint(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointOrder(x) - codePointOrder(y);
  }
  return a.length - b.length;
}

/** A UTF-16 unit moved so that surrogates (U+D800–DFFF, parts of code points above U+FFFF) sort after U+E000–FFFF. */
function codePointOrder(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}
