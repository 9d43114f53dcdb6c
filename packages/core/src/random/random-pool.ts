import { randomFillSync } from 'node:crypto';

/**
 * Bytes from the operating system's CSPRNG, fetched 4 KiB at a time and handed out once each,
 * as Node's own randomUUID does. On these machines a randomBytes call costs a system call:
 * ulid's default made 16 of them per id (a visible share of the api's CPU on a write in bench
 * api-write), and a webhook secret one more per configuration.
 */
export class RandomPool {
  private readonly pool: Buffer;
  private next: number;

  constructor(private readonly size = 4096) {
    this.pool = Buffer.alloc(size);
    this.next = size;
  }

  /** `count` fresh bytes (a copy: the caller may keep them). */
  bytes(count: number): Buffer {
    if (count > this.size) return randomFillSync(Buffer.alloc(count));
    if (this.next + count > this.size) this.refill();
    const out = Buffer.from(this.pool.subarray(this.next, this.next + count));
    this.next += count;
    return out;
  }

  /** One fresh byte b as b / 0xff, in [0, 1]: the form ulid's generator takes. */
  unit(): number {
    if (this.next >= this.size) this.refill();
    return this.pool[this.next++] / 0xff;
  }

  private refill(): void {
    randomFillSync(this.pool);
    this.next = 0;
  }
}

/** The process's pool, for secrets and ids. */
export const randomPool = new RandomPool();
