import { compareJson, jsonEquals, MISSING, PathValue, someValueAt } from './payload-values';

/**
 * Subscription filters (PRODUCT.md §14): the subset of MongoDB's query language a receiver's
 * owner needs, with MongoDB's semantics on the event's payload. A filter is an object whose keys
 * are dotted paths into the payload (`queue.id`, `tags.0`) or `$and` / `$or` (non-empty arrays of
 * filters) / `$not` (a filter; MongoDB spells it `$nor: [filter]`), all of which must hold. A
 * path's value is a JSON literal (equality) or an object of operators.
 */

/** At most this many bytes as JSON, this deep (the filter object is level 1; every object and array inside adds one), this many conditions. */
export const MAX_FILTER_BYTES = 4096;
export const MAX_FILTER_DEPTH = 8;
export const MAX_FILTER_CONDITIONS = 64;
/** `$in` and `$nin` take at most this many literals. */
export const MAX_FILTER_IN_VALUES = 100;

export const FILTER_OPERATORS = ['$eq', '$ne', '$in', '$nin', '$gt', '$gte', '$lt', '$lte', '$exists'] as const;
export const FILTER_LOGICAL_KEYS = ['$and', '$or', '$not'] as const;

export type PayloadFilter = Record<string, unknown>;
export type FilterMatcher = (payload: unknown) => boolean;

/** A place in the filter (`$or[1].queue.id.$gt`, relative to the filter) and what is wrong there. */
export interface FilterProblem {
  path: string;
  message: string;
}

export type CheckedFilter = { ok: true; matches: FilterMatcher } | { ok: false; problems: FilterProblem[] };

/** The most problems reported for one filter: enough to fix it, never a copy of a huge one. */
const MAX_PROBLEMS = 20;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
const OPERATOR_LIST = FILTER_OPERATORS.join(', ');

/**
 * Checks `filter` against every bound of §14 and compiles it into a matcher, or names each
 * problem's place. Nothing of the filter is trusted: any JSON value may arrive here.
 */
export function checkFilter(filter: unknown): CheckedFilter {
  const problems: FilterProblem[] = [];
  const problem = (path: string, message: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push({ path, message });
  };
  if (!isObject(filter)) return { ok: false, problems: [{ path: '', message: 'must be a JSON object' }] };
  const bytes = utf8Length(JSON.stringify(filter));
  if (bytes > MAX_FILTER_BYTES) {
    return { ok: false, problems: [{ path: '', message: `must be at most ${MAX_FILTER_BYTES} bytes as JSON (it is ${bytes})` }] };
  }
  const tooDeep = deeperThan(filter, MAX_FILTER_DEPTH, 1, '');
  if (tooDeep !== null) {
    return { ok: false, problems: [{ path: tooDeep, message: `is nested deeper than ${MAX_FILTER_DEPTH} levels` }] };
  }
  const compiler = new Compiler(problem);
  const matches = compiler.filter(filter, '');
  return problems.length > 0 ? { ok: false, problems } : { ok: true, matches };
}

class Compiler {
  private conditions = 0;

  constructor(private readonly problem: (path: string, message: string) => void) {}

  filter(filter: Record<string, unknown>, at: string): FilterMatcher {
    const parts: FilterMatcher[] = [];
    for (const key of Object.keys(filter)) {
      const value = filter[key];
      const here = join(at, key);
      if (key === '$and' || key === '$or') parts.push(this.logical(key, value, here));
      else if (key === '$not') {
        if (!isObject(value)) this.problem(here, 'must be a filter (a JSON object)');
        else {
          const inner = this.filter(value, here);
          parts.push((payload) => !inner(payload));
        }
      } else if (key.startsWith('$')) {
        this.problem(here, `is not allowed here: a key is a dotted path into the payload, $and, $or or $not`);
      } else if (this.path(key, here)) {
        parts.push(this.pathValue(key.split('.'), value, here));
      }
    }
    return allOf(parts);
  }

  private logical(key: '$and' | '$or', value: unknown, at: string): FilterMatcher {
    if (!Array.isArray(value) || value.length === 0) {
      this.problem(at, 'must be a non-empty array of filters');
      return () => false;
    }
    const filters = value.map((item, i) => {
      if (isObject(item)) return this.filter(item, `${at}[${i}]`);
      this.problem(`${at}[${i}]`, 'must be a filter (a JSON object)');
      return () => false;
    });
    return key === '$and' ? allOf(filters) : (payload) => filters.some((matches) => matches(payload));
  }

  private path(key: string, at: string): boolean {
    if (key.length === 0 || key.split('.').some((part) => part.length === 0)) {
      this.problem(at, 'is not a path: write the payload fields joined by "." (queue.id, tags.0)');
      return false;
    }
    if (CONTROL_CHARACTER.test(key)) {
      this.problem(at, 'must not contain control characters');
      return false;
    }
    return true;
  }

  /** A path's value: an object of operators when it has a `$` key, else a literal to equal. */
  private pathValue(parts: string[], value: unknown, at: string): FilterMatcher {
    if (!isObject(value) || !Object.keys(value).some((key) => key.startsWith('$'))) {
      this.literal(value, at);
      return this.condition(at) ? equals(parts, value) : () => false;
    }
    const conditions: FilterMatcher[] = [];
    for (const operator of Object.keys(value)) {
      const operand = value[operator];
      const here = join(at, operator);
      const matcher = this.operator(parts, operator, operand, here);
      if (matcher && this.condition(here)) conditions.push(matcher);
    }
    return allOf(conditions);
  }

  private operator(parts: string[], operator: string, operand: unknown, at: string): FilterMatcher | null {
    switch (operator) {
      case '$eq':
      case '$ne': {
        if (!this.literal(operand, at)) return null;
        const matcher = equals(parts, operand);
        return operator === '$eq' ? matcher : (payload) => !matcher(payload);
      }
      case '$in':
      case '$nin': {
        if (!Array.isArray(operand)) {
          this.problem(at, `must be an array of at most ${MAX_FILTER_IN_VALUES} values`);
          return null;
        }
        if (operand.length > MAX_FILTER_IN_VALUES) {
          this.problem(at, `must have at most ${MAX_FILTER_IN_VALUES} values (it has ${operand.length})`);
          return null;
        }
        if (!operand.every((item, i) => this.literal(item, `${at}[${i}]`))) return null;
        const matcher = isIn(parts, operand);
        return operator === '$in' ? matcher : (payload) => !matcher(payload);
      }
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte': {
        if (typeof operand !== 'number' && typeof operand !== 'string') {
          this.problem(at, 'must be a number or a string');
          return null;
        }
        return compares(parts, operand, ORDER_TESTS[operator]);
      }
      case '$exists': {
        if (typeof operand !== 'boolean') {
          this.problem(at, 'must be a boolean');
          return null;
        }
        const exists: FilterMatcher = (payload) => someValueAt(payload, parts, (value) => value !== MISSING);
        return operand ? exists : (payload) => !exists(payload);
      }
      default:
        this.problem(
          at,
          operator.startsWith('$')
            ? `is not an allowed operator (${OPERATOR_LIST})`
            : `must be an operator (${OPERATOR_LIST}): an object with operators holds nothing else`,
        );
        return null;
    }
  }

  /**
   * Literals are the customer's data (any string, control characters included), but a `$` key
   * in one is refused: `{ "queue": { "id": { "$gt": 5 } } }` would be an equality with an object
   * holding "$gt" in MongoDB, never what was meant (`{ "queue.id": { "$gt": 5 } }`).
   */
  private literal(value: unknown, at: string): boolean {
    if (Array.isArray(value)) return value.every((item, i) => this.literal(item, `${at}[${i}]`));
    if (!isObject(value)) return true;
    let ok = true;
    for (const key of Object.keys(value)) {
      if (key.startsWith('$')) {
        this.problem(
          join(at, key),
          'is an operator inside a value: operators apply to a path (write {"queue.id": {"$gt": 5}}, not {"queue": {"id": {"$gt": 5}}})',
        );
        ok = false;
      } else if (!this.literal(value[key], join(at, key))) ok = false;
    }
    return ok;
  }

  /** Counts one condition; false (and a problem) past MAX_FILTER_CONDITIONS. */
  private condition(at: string): boolean {
    this.conditions++;
    if (this.conditions === MAX_FILTER_CONDITIONS + 1) {
      this.problem(at, `is one condition too many: a filter has at most ${MAX_FILTER_CONDITIONS}`);
    }
    return this.conditions <= MAX_FILTER_CONDITIONS;
  }
}

const ORDER_TESTS: Record<'$gt' | '$gte' | '$lt' | '$lte', (order: number) => boolean> = {
  $gt: (order) => order > 0,
  $gte: (order) => order >= 0,
  $lt: (order) => order < 0,
  $lte: (order) => order <= 0,
};

/** `$eq`: a value at the path equals the literal; `null` also matches where the path yields nothing. */
function equals(parts: string[], literal: unknown): FilterMatcher {
  const test = equalityTest(literal);
  return (payload) => someValueAt(payload, parts, test);
}

function isIn(parts: string[], literals: unknown[]): FilterMatcher {
  const tests = literals.map(equalityTest);
  return (payload) => someValueAt(payload, parts, (value) => tests.some((test) => test(value)));
}

function equalityTest(literal: unknown): (value: PathValue) => boolean {
  if (literal === null) return (value) => value === null || value === MISSING;
  if (typeof literal !== 'object') return (value) => value === literal;
  return (value) => value !== MISSING && jsonEquals(value, literal);
}

function compares(parts: string[], bound: number | string, holds: (order: number) => boolean): FilterMatcher {
  return (payload) =>
    someValueAt(payload, parts, (value) => {
      if (value === MISSING) return false;
      const order = compareJson(value, bound);
      return order !== null && holds(order);
    });
}

function allOf(matchers: FilterMatcher[]): FilterMatcher {
  if (matchers.length === 1) return matchers[0];
  return (payload) => {
    for (const matches of matchers) if (!matches(payload)) return false;
    return true;
  };
}

/** The first place more than `limit` levels deep, or null. */
function deeperThan(value: unknown, limit: number, depth: number, at: string): string | null {
  if (typeof value !== 'object' || value === null) return null;
  if (depth > limit) return at;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = deeperThan(value[i], limit, depth + 1, `${at}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    const found = deeperThan((value as Record<string, unknown>)[key], limit, depth + 1, join(at, key));
    if (found !== null) return found;
  }
  return null;
}

/** Bytes of `text` as UTF-8, without Buffer (core runs in the console too). */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

function join(at: string, key: string): string {
  return at === '' ? key : `${at}.${key}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
