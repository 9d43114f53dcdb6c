import { compareByCodePoint } from './payload-values';
import { checkFilter, MAX_FILTER_BYTES, MAX_FILTER_CONDITIONS, MAX_FILTER_IN_VALUES, PayloadFilter } from './subscription-filter';

function matcher(filter: PayloadFilter): (payload: unknown) => boolean {
  const checked = checkFilter(filter);
  if (!checked.ok) throw new Error(`refused: ${JSON.stringify(checked.problems)}`);
  return checked.matches;
}

function problemsOf(filter: unknown): { path: string; message: string }[] {
  const checked = checkFilter(filter);
  if (checked.ok) throw new Error('accepted');
  return checked.problems;
}

/**
 * The operator table: each row is a filter, a payload, and what MongoDB answers for
 * `db.c.find(filter)` on a collection holding that payload (the manual's query pages, and the
 * server's path traversal in src/mongo/db/matcher/path.cpp for the array cases).
 */
const TABLE: [string, PayloadFilter, unknown, boolean][] = [
  // Equality with a literal.
  ['a scalar equals', { status: 'A' }, { status: 'A' }, true],
  ['a scalar differs', { status: 'A' }, { status: 'B' }, false],
  ['types never equal across: 1 is not "1"', { n: 1 }, { n: '1' }, false],
  ['types never equal across: 1 is not true', { n: 1 }, { n: true }, false],
  ['numbers equal by value', { n: 1 }, { n: 1.0 }, true],
  ['a missing field does not equal a value', { n: 1 }, {}, false],
  ['an array holding the value matches', { tags: 'red' }, { tags: ['blank', 'red'] }, true],
  ['only one level of arrays is searched', { tags: 'red' }, { tags: [['red']] }, false],
  ['an array literal equals the whole array, in order', { tags: ['red', 'blank'] }, { tags: ['red', 'blank'] }, true],
  ['an array literal in another order does not', { tags: ['red', 'blank'] }, { tags: ['blank', 'red'] }, false],
  ['an array literal equals an element that is that array', { tags: ['red'] }, { tags: [['red'], 'x'] }, true],
  ['an embedded document equals exactly', { size: { h: 14, w: 21 } }, { size: { h: 14, w: 21 } }, true],
  ['an embedded document with fields in another order does not', { size: { h: 14, w: 21 } }, { size: { w: 21, h: 14 } }, false],
  ['an embedded document with a field more does not', { size: { h: 14 } }, { size: { h: 14, w: 21 } }, false],
  ['an empty object equals an empty object', { meta: {} }, { meta: {} }, true],
  // null: null or missing.
  ['null matches null', { a: null }, { a: null }, true],
  ['null matches a missing field', { a: null }, {}, true],
  ['null matches an array holding null', { a: null }, { a: [1, null] }, true],
  ['null does not match an empty array', { a: null }, { a: [] }, false],
  ['null through an array of documents: one lacking the field', { 'a.b': null }, { a: [{ b: 1 }, { c: 1 }] }, true],
  ['null through an array of scalars: nothing is produced', { 'a.b': null }, { a: [1, 2] }, false],
  ['null where a scalar is in the way', { 'a.b': null }, { a: 5 }, true],
  // Dotted paths.
  ['a dotted path into documents', { 'queue.id': 'q-1' }, { queue: { id: 'q-1' } }, true],
  ['a dotted path through an array of documents', { 'agents.id': 'a-2' }, { agents: [{ id: 'a-1' }, { id: 'a-2' }] }, true],
  ['a dotted path through nested arrays of documents', { 'a.b.c': 3 }, { a: [{ b: [{ c: 1 }, { c: 3 }] }] }, true],
  ['a dotted path into an array of arrays finds nothing', { 'a.b': 1 }, { a: [[{ b: 1 }]] }, false],
  ['a numeric part indexes an array', { 'tags.0': 'red' }, { tags: ['red', 'blank'] }, true],
  ['a numeric part indexes only its position', { 'tags.1': 'red' }, { tags: ['red', 'blank'] }, false],
  ['a numeric part names a field of a document', { 'tags.0': 'red' }, { tags: { '0': 'red' } }, true],
  ['a numeric part then a field', { 'agents.1.id': 'a-2' }, { agents: [{ id: 'a-1' }, { id: 'a-2' }] }, true],
  ['a numeric part into a nested array', { 'm.0.1': 'b' }, { m: [['a', 'b']] }, true],
  ['a numeric part ending at a nested array takes it whole', { 'm.0': 'b' }, { m: [['a', 'b']] }, false],
  ['… which equals an array literal', { 'm.0': ['a', 'b'] }, { m: [['a', 'b']] }, true],
  ['"01" is not index 1', { 'tags.01': 'blank' }, { tags: ['red', 'blank'] }, false],
  ['a key with a dot in the payload is not reached by a path', { 'a.b': 1 }, { 'a.b': 1 }, false],
  // $eq and $ne.
  ['$eq as equality', { n: { $eq: 5 } }, { n: 5 }, true],
  ['$eq with an array field', { n: { $eq: 5 } }, { n: [4, 5] }, true],
  ['$eq null matches missing', { n: { $eq: null } }, {}, true],
  ['$ne on a different value', { n: { $ne: 5 } }, { n: 4 }, true],
  ['$ne on a missing field', { n: { $ne: 5 } }, {}, true],
  ['$ne on an array holding the value', { n: { $ne: 5 } }, { n: [4, 5] }, false],
  ['$ne null needs the field', { n: { $ne: null } }, {}, false],
  ['$ne null on a value', { n: { $ne: null } }, { n: 0 }, true],
  // $in and $nin.
  ['$in one of', { s: { $in: ['A', 'D'] } }, { s: 'D' }, true],
  ['$in none of', { s: { $in: ['A', 'D'] } }, { s: 'B' }, false],
  ['$in with an array field', { tags: { $in: ['red', 'x'] } }, { tags: ['blank', 'red'] }, true],
  ['$in null matches missing', { s: { $in: [null, 'A'] } }, {}, true],
  ['$in an empty list matches nothing', { s: { $in: [] } }, { s: 'A' }, false],
  ['$in an array literal equals the whole array', { tags: { $in: [['a', 'b']] } }, { tags: ['a', 'b'] }, true],
  ['$nin on a missing field', { s: { $nin: ['A'] } }, {}, true],
  ['$nin when an element is in the list', { tags: { $nin: ['red'] } }, { tags: ['blank', 'red'] }, false],
  ['$nin when none is', { tags: { $nin: ['red'] } }, { tags: ['blank'] }, true],
  // Comparisons.
  ['$gt a number', { qty: { $gt: 20 } }, { qty: 25 }, true],
  ['$gt equal is not greater', { qty: { $gt: 20 } }, { qty: 20 }, false],
  ['$gte equal', { qty: { $gte: 20 } }, { qty: 20 }, true],
  ['$lt', { qty: { $lt: 20 } }, { qty: 19.5 }, true],
  ['$lte', { qty: { $lte: 20 } }, { qty: 21 }, false],
  ['$gt never on a missing field', { qty: { $gt: -1 } }, {}, false],
  ['$gt on null is not compared', { qty: { $lt: 5 } }, { qty: null }, false],
  ['type bracketing: a string is not compared with a number', { qty: { $gt: 5 } }, { qty: '10' }, false],
  ['type bracketing: a number is not compared with a string', { name: { $lt: 'z' } }, { name: 5 }, false],
  ['type bracketing: true is not a number', { qty: { $gt: 0 } }, { qty: true }, false],
  ['strings compare by code point', { name: { $gt: 'Zed' } }, { name: 'alpha' }, true],
  ['strings compare by code point above U+FFFF', { s: { $gt: '\uff5e' } }, { s: '\u{1f600}' }, true],
  ['a prefix sorts first', { s: { $lt: 'abc' } }, { s: 'ab' }, true],
  ['an array field matches when any element does', { scores: { $gt: 80 } }, { scores: [10, 90] }, true],
  ['each operator of a path tests the elements on its own', { scores: { $gt: 50, $lt: 20 } }, { scores: [10, 90] }, true],
  ['both bounds on one scalar', { scores: { $gt: 50, $lt: 80 } }, { scores: 90 }, false],
  // $exists.
  ['$exists true on a present field', { a: { $exists: true } }, { a: 0 }, true],
  ['$exists true on a null field', { a: { $exists: true } }, { a: null }, true],
  ['$exists true on a missing field', { a: { $exists: true } }, { b: 1 }, false],
  ['$exists false on a missing field', { a: { $exists: false } }, { b: 1 }, true],
  ['$exists through an array of documents, one has it', { 'a.b': { $exists: true } }, { a: [{ c: 1 }, { b: 2 }] }, true],
  ['$exists false through an array of scalars', { 'a.b': { $exists: false } }, { a: [1, 2] }, true],
  ['$exists on an index past the end', { 'tags.5': { $exists: true } }, { tags: ['a'] }, false],
  // Logic.
  ['several keys all hold', { a: 1, b: 2 }, { a: 1, b: 2 }, true],
  ['several keys, one fails', { a: 1, b: 2 }, { a: 1, b: 3 }, false],
  ['$and', { $and: [{ a: 1 }, { b: { $gt: 1 } }] }, { a: 1, b: 2 }, true],
  ['$and with a failing one', { $and: [{ a: 1 }, { b: { $gt: 2 } }] }, { a: 1, b: 2 }, false],
  ['$or', { $or: [{ a: 2 }, { b: 2 }] }, { a: 1, b: 2 }, true],
  ['$or with none holding', { $or: [{ a: 2 }, { b: 3 }] }, { a: 1, b: 2 }, false],
  ['$not', { $not: { a: 1 } }, { a: 2 }, true],
  ['$not of a match', { $not: { a: 1 } }, { a: 1 }, false],
  ['$not of a missing field', { $not: { a: { $exists: true } } }, {}, true],
  ['the empty filter matches everything', {}, { anything: true }, true],
  // Hostile names are ordinary names.
  ['"constructor" is only an own field', { constructor: { $exists: true } }, {}, false],
  ['"toString" is only an own field', { 'a.toString': { $exists: true } }, { a: {} }, false],
  ['"__proto__" is an ordinary field', { '__proto__.x': 1 }, JSON.parse('{"__proto__": {"x": 1}}'), true],
  ['"length" of an array is not a field', { 'tags.length': 2 }, { tags: ['a', 'b'] }, false],
];

describe('subscription filters', () => {
  describe('MongoDB semantics, operator by operator', () => {
    it.each(TABLE)('%s', (_name, filter, payload, expected) => {
      expect(matcher(filter)(payload)).toBe(expected);
    });
  });

  it('compares strings by code point, as UTF-8 bytes do', () => {
    expect(compareByCodePoint('\u{1f600}', '\uff5e')).toBeGreaterThan(0);
    expect(compareByCodePoint('a', 'b')).toBeLessThan(0);
    expect(compareByCodePoint('abc', 'abc')).toBe(0);
  });

  describe('bounds and refusals, each naming its place', () => {
    it('refuses anything but an object', () => {
      for (const filter of [null, [], 'a', 1, true]) expect(problemsOf(filter)).toEqual([{ path: '', message: 'must be a JSON object' }]);
    });

    it('refuses operators outside the subset, where they are', () => {
      expect(problemsOf({ $or: [{ a: 1 }, { 'queue.id': { $regex: '^q' } }] })).toEqual([
        { path: '$or[1].queue.id.$regex', message: expect.stringContaining('is not an allowed operator') },
      ]);
      for (const key of ['$where', '$expr', '$nor', '$text', '$comment']) {
        expect(problemsOf({ [key]: 'x' })).toEqual([{ path: key, message: expect.stringContaining('is not allowed here') }]);
      }
      expect(problemsOf({ a: { $not: { $gt: 1 } } })[0].path).toBe('a.$not');
      expect(problemsOf({ a: { $size: 1 } })[0].path).toBe('a.$size');
      expect(problemsOf({ a: { $gt: 1, b: 2 } })).toEqual([{ path: 'a.b', message: expect.stringContaining('must be an operator') }]);
    });

    it('refuses operands of the wrong type', () => {
      expect(problemsOf({ a: { $gt: null } })).toEqual([{ path: 'a.$gt', message: 'must be a number or a string' }]);
      expect(problemsOf({ a: { $lte: [1] } })[0].path).toBe('a.$lte');
      expect(problemsOf({ a: { $exists: 1 } })).toEqual([{ path: 'a.$exists', message: 'must be a boolean' }]);
      expect(problemsOf({ a: { $in: 'x' } })[0].path).toBe('a.$in');
      expect(problemsOf({ $and: [] })).toEqual([{ path: '$and', message: 'must be a non-empty array of filters' }]);
      expect(problemsOf({ $or: {} })[0].path).toBe('$or');
      expect(problemsOf({ $or: [{ a: 1 }, 3] })).toEqual([{ path: '$or[1]', message: 'must be a filter (a JSON object)' }]);
      expect(problemsOf({ $not: [] })).toEqual([{ path: '$not', message: 'must be a filter (a JSON object)' }]);
    });

    it('refuses operators inside a literal, naming them', () => {
      expect(problemsOf({ queue: { id: 5, x: { $gt: 5 } } })).toEqual([
        { path: 'queue.x.$gt', message: expect.stringContaining('is an operator inside a value') },
      ]);
      expect(problemsOf({ a: { $in: [1, { b: [{ $exists: true }] }] } })[0].path).toBe('a.$in[1].b[0].$exists');
    });

    it('refuses malformed paths', () => {
      for (const path of ['', 'a..b', '.a', 'a.']) expect(problemsOf({ [path]: 1 })[0]).toMatchObject({ path });
      expect(problemsOf({ 'a\u0000b': 1 })[0].message).toBe('must not contain control characters');
    });

    it(`refuses more than ${MAX_FILTER_IN_VALUES} values in $in and $nin`, () => {
      const values = Array.from({ length: MAX_FILTER_IN_VALUES }, (_, i) => i);
      expect(checkFilter({ a: { $in: values } }).ok).toBe(true);
      expect(problemsOf({ b: { $nin: [...values, 100] } })).toEqual([
        { path: 'b.$nin', message: 'must have at most 100 values (it has 101)' },
      ]);
    });

    it(`refuses more than ${MAX_FILTER_CONDITIONS} conditions, naming the first one over`, () => {
      const conditions = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, i]));
      expect(checkFilter(conditions(MAX_FILTER_CONDITIONS)).ok).toBe(true);
      expect(problemsOf(conditions(MAX_FILTER_CONDITIONS + 1))).toEqual([
        { path: 'f64', message: 'is one condition too many: a filter has at most 64' },
      ]);
      expect(problemsOf({ $or: [conditions(60), { a: { $gt: 1, $lt: 5, $ne: 3, $exists: true, $in: [1] } }] })[0].path).toBe(
        '$or[1].a.$in',
      );
    });

    it('refuses a filter deeper than 8 levels, naming the first place too deep', () => {
      let filter: PayloadFilter = { a: 1 };
      for (let level = 2; level <= 8; level++) filter = { $not: filter };
      expect(checkFilter(filter).ok).toBe(true); // seven $not and the innermost object: 8 levels
      expect(problemsOf({ $not: filter })).toEqual([
        { path: '$not.$not.$not.$not.$not.$not.$not.$not', message: 'is nested deeper than 8 levels' },
      ]);
      expect(problemsOf({ a: { $in: [[[[[[[[1]]]]]]]] } })[0].path).toBe('a.$in[0][0][0][0][0][0]');
    });

    it(`refuses more than ${MAX_FILTER_BYTES} bytes as JSON`, () => {
      const fits = { s: 'x'.repeat(MAX_FILTER_BYTES - 8) };
      expect(JSON.stringify(fits).length).toBe(MAX_FILTER_BYTES);
      expect(checkFilter(fits).ok).toBe(true);
      expect(problemsOf({ s: 'é'.repeat(MAX_FILTER_BYTES / 2) })).toEqual([
        { path: '', message: `must be at most ${MAX_FILTER_BYTES} bytes as JSON (it is ${MAX_FILTER_BYTES + 8})` },
      ]);
    });

    it('names at most 20 problems', () => {
      const bad = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, { $regex: 'x' }]));
      expect(problemsOf(bad)).toHaveLength(20);
    });
  });
});
