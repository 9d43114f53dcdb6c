import { monotonicFactory } from 'ulid';
import { randomPool } from '../random/random-pool';

export type IdPrefix = 'acc' | 'key' | 'sec' | 'evt' | 'dlv' | 'att';

/**
 * Prefixed, time-ordered ids (`evt_01JD…`): the prefix tells a reader what an id names, and the
 * ULID's time ordering makes "newest first" cursor paging a plain index scan.
 */
export interface IdGenerator {
  next(prefix: IdPrefix): string;
}

const ID_BODY = /^[0-9a-hjkmnp-tv-z]{26}$/;

/**
 * Whether `value` has the shape of an id Herald made with `prefix`. Routes look ids up only
 * when they do: anything else (control characters, 10,000 characters) is simply not found.
 */
export function isIdOf(prefix: IdPrefix, value: unknown): value is string {
  return typeof value === 'string' && value.length === prefix.length + 27 && value.startsWith(`${prefix}_`) && ID_BODY.test(value.slice(prefix.length + 1));
}

export class UlidIdGenerator implements IdGenerator {
  // ulid's default source makes a system call per character; the pool gives the same CSPRNG bytes.
  private readonly ulid = monotonicFactory(() => randomPool.unit());

  constructor(private readonly now: () => number = Date.now) {}

  next(prefix: IdPrefix): string {
    return `${prefix}_${this.ulid(this.now()).toLowerCase()}`;
  }
}
