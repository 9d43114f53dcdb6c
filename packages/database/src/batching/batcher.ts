/**
 * Natural micro-batching: while one batch is being written, new items wait and go together in
 * the next one. At low load every batch has one item, so nothing waits; under load one round
 * trip and one commit serve many items. Each submitter gets its own item's result or error.
 *
 * A rider (`ride`) is other work that goes with the next write: the writer gets it beside that
 * write's items, so both can share its transaction (the queue's finisher carries a claim that
 * way). The rider is opaque here: the writer settles whatever it promised.
 *
 * With `gather`, a write that would start with fewer than `gather.items` items while items come
 * faster than writes (the last write carried two or more and ended under `gather.ms` ago) waits
 * up to `gather.ms` for more: under a stream, batches then grow past what one write's duration
 * collects, and so do the items per commit. Items that each get a write of their own (a steady
 * trickle, or one after a quiet spell) never wait: waiting would only move their write into the
 * next one's way.
 */
export class Batcher<I, O, R = never> {
  private queue: { item: I; resolve: (result: O) => void; reject: (error: unknown) => void }[] = [];
  private riders: { rider: R; withItems: boolean }[] = [];
  private running = false;
  /** When the last write ended (performance.now()), and how many items it carried, for `gather`. */
  private lastWriteEnded = -Infinity;
  private lastWriteItems = 0;
  /** Ends a gathering wait early, once enough items are waiting. */
  private gathered: (() => void) | null = null;

  /**
   * `write` returns one result per item, in order; an Error in its place fails just that item.
   * It gets at most one rider per call, and may get one with no items (nothing was waiting).
   */
  constructor(
    private readonly write: (items: I[], rider: R | null) => Promise<(O | Error)[]>,
    private readonly maxBatch = 200,
    private readonly gather: { items: number; ms: number } | null = null,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.gathered !== null && this.queue.length >= this.gather!.items) this.gathered();
      if (!this.running) void this.drain();
    });
  }

  /**
   * Hands `rider` to the next write to start: after the one in flight, if any, with the items
   * waiting by then. So it runs after every item submitted before it, unless more than a batch's
   * worth of items were waiting. With nothing waiting, it goes alone, or, `withItems`, waits for
   * the next item submitted (so that it shares a write with it). Returns a withdrawal: true when
   * it took the rider out before any write got it.
   */
  ride(rider: R, { withItems = false } = {}): () => boolean {
    const entry = { rider, withItems };
    this.riders.push(entry);
    if (!this.running && !withItems) void this.drain();
    return () => {
      const index = this.riders.indexOf(entry);
      if (index >= 0) this.riders.splice(index, 1);
      return index >= 0;
    };
  }

  /** The rider for a write of `items` items: the first one waiting; for a write of none, the first that need not wait for items. */
  private takeRider(items: number): R | null {
    const index = items > 0 ? 0 : this.riders.findIndex((r) => !r.withItems);
    return index >= 0 && index < this.riders.length ? this.riders.splice(index, 1)[0].rider : null;
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0 || this.riders.some((r) => !r.withItems)) {
      if (this.gather !== null && this.queue.length > 0 && this.queue.length < this.gather.items) {
        if (this.lastWriteItems >= 2 && performance.now() - this.lastWriteEnded < this.gather.ms) await this.gatherFor(this.gather.ms);
      }
      const batch = this.queue.splice(0, this.maxBatch);
      const rider = this.takeRider(batch.length);
      try {
        const results = await this.write(
          batch.map((entry) => entry.item),
          rider,
        );
        batch.forEach((entry, index) => {
          const result = results[index];
          if (result instanceof Error) entry.reject(result);
          else entry.resolve(result);
        });
      } catch (error) {
        batch.forEach((entry) => entry.reject(error));
      }
      // A rider written alone is not part of a stream of items.
      if (batch.length > 0) {
        this.lastWriteEnded = performance.now();
        this.lastWriteItems = batch.length;
      }
    }
    this.running = false;
  }

  /** Waits `ms`, or until `gather.items` items are waiting. */
  private gatherFor(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.gathered = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.gathered = done;
    });
  }
}
