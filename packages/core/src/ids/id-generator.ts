import { encodeTime, monotonicFactory } from 'ulid';
import { randomPool } from '../random/random-pool';

export type IdPrefix = 'acc' | 'key' | 'sec' | 'evt' | 'dlv' | 'ptl' | 'aud';

/**
 * Prefixed, time-ordered ids (`evt_01JD…`): the prefix tells a reader what an id names, and the
 * ULID's time ordering makes "newest first" cursor paging a plain index scan.
 */
export interface IdGenerator {
  next(prefix: IdPrefix): string;
}

/** The shape of an id Herald makes with `prefix`: the prefix and a lowercase ULID (Crockford base32). */
export function idPattern(prefix: IdPrefix): RegExp {
  return new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`);
}

/**
 * The smallest id `prefix` can have for a time at or after `at`: every id made at `at` or later
 * sorts at or above it. A lower bound for walking an index of ids by time.
 */
export function firstIdAt(prefix: IdPrefix, at: Date): string {
  return `${prefix}_${encodeTime(Math.max(0, at.getTime()), 10).toLowerCase()}`;
}

const ID_PATTERNS = new Map<IdPrefix, RegExp>();

/**
 * Whether `value` has the shape of an id Herald made with `prefix`. Routes look ids up only
 * when they do: anything else (control characters, 10,000 characters) is simply not found.
 */
export function isIdOf(prefix: IdPrefix, value: unknown): value is string {
  let pattern = ID_PATTERNS.get(prefix);
  if (!pattern) ID_PATTERNS.set(prefix, (pattern = idPattern(prefix)));
  return typeof value === 'string' && pattern.test(value);
}

export class UlidIdGenerator implements IdGenerator {
  // ulid's default source makes a system call per character; the pool gives the same CSPRNG bytes.
  private readonly ulid = monotonicFactory(() => randomPool.unit());

  constructor(private readonly now: () => number = Date.now) {}

  next(prefix: IdPrefix): string {
    return `${prefix}_${this.ulid(this.now()).toLowerCase()}`;
  }
}
