/**
 * Natural micro-batching: while one batch is being written, new items wait and go together in
 * the next one. At low load every batch has one item, so nothing waits; under load one round
 * trip and one commit serve many items. Each submitter gets its own item's result or error.
 */
export class Batcher<I, O> {
  private queue: { item: I; resolve: (result: O) => void; reject: (error: unknown) => void }[] = [];
  private running = false;

  /** `write` returns one result per item, in order; an Error in its place fails just that item. */
  constructor(
    private readonly write: (items: I[]) => Promise<(O | Error)[]>,
    private readonly maxBatch = 200,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const results = await this.write(batch.map((entry) => entry.item));
        batch.forEach((entry, index) => {
          const result = results[index];
          if (result instanceof Error) entry.reject(result);
          else entry.resolve(result);
        });
      } catch (error) {
        batch.forEach((entry) => entry.reject(error));
      }
    }
    this.running = false;
  }
}
