import { Batcher } from './batcher';

describe('Batcher', () => {
  it('writes a lone item at once, and groups items that arrive while a write is in flight', async () => {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    const batcher = new Batcher<number, number>(async (items) => {
      batches.push(items);
      if (batches.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return items.map((item) => item * 10);
    });
    const first = batcher.submit(1);
    const rest = [2, 3, 4].map((n) => batcher.submit(n));
    release();
    expect(await first).toBe(10);
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('rejects every item of a failed batch and keeps going', async () => {
    const batcher = new Batcher<number, number>(async (items) => {
      if (items.includes(2)) throw new Error('bad batch');
      return items;
    }, 1);
    await expect(batcher.submit(2)).rejects.toThrow('bad batch');
    await expect(batcher.submit(3)).resolves.toBe(3);
  });

  it('fails only the items the writer reports as errors', async () => {
    let release: () => void = () => undefined;
    const batcher = new Batcher<number, number>(async (items) => {
      if (items.length === 1 && items[0] === 0) await new Promise<void>((resolve) => (release = resolve));
      return items.map((item) => (item === 2 ? new Error('item 2 is bad') : item));
    });
    const first = batcher.submit(0);
    const [one, two, three] = [1, 2, 3].map((n) => batcher.submit(n));
    release();
    await expect(first).resolves.toBe(0);
    await expect(one).resolves.toBe(1);
    await expect(two).rejects.toThrow('item 2 is bad');
    await expect(three).resolves.toBe(3);
  });

  it('splits the queue into batches of at most maxBatch', async () => {
    const sizes: number[] = [];
    const batcher = new Batcher<number, number>(async (items) => {
      sizes.push(items.length);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return items;
    }, 3);
    await Promise.all(Array.from({ length: 8 }, (_, i) => batcher.submit(i)));
    expect(sizes).toEqual([1, 3, 3, 1]);
  });
});

describe('Batcher gathering', () => {
  /** A batcher gathering as `gather` says, recording each write's items, whose first write waits for release(). */
  function gatheringHeldAtFirstWrite(gather: { items: number; ms: number }) {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    const batcher = new Batcher<number, number>(
      async (items) => {
        batches.push(items);
        if (batches.length === 1) await new Promise<void>((resolve) => (release = resolve));
        return items;
      },
      200,
      gather,
    );
    return { batcher, batches, release: () => release() };
  }

  it('while items come faster than writes, waits up to gather.ms for gather.items before the next write', async () => {
    const { batcher, batches, release } = gatheringHeldAtFirstWrite({ items: 4, ms: 1_000 });
    const first = batcher.submit(1);
    // Two arrive during the first write: a stream, written together.
    const stream = [batcher.submit(2), batcher.submit(3)];
    release();
    await Promise.all([first, ...stream]);
    // The next write waits for more: four items end the wait long before its second.
    const started = performance.now();
    await Promise.all([4, 5, 6, 7].map((n) => batcher.submit(n)));
    expect(batches).toEqual([[1], [2, 3], [4, 5, 6, 7]]);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('writes what it has once gather.ms has passed; an item after a write of one never waits', async () => {
    const { batcher, batches, release } = gatheringHeldAtFirstWrite({ items: 8, ms: 30 });
    const first = batcher.submit(1);
    const stream = [batcher.submit(2), batcher.submit(3)];
    release();
    await Promise.all([first, ...stream]);
    const waited = performance.now();
    await batcher.submit(4);
    expect(performance.now() - waited).toBeGreaterThanOrEqual(25);

    // A trickle: the last write carried one item, so the next goes at once, however soon.
    const trickle = performance.now();
    await batcher.submit(5);
    expect(performance.now() - trickle).toBeLessThan(25);
    expect(batches).toEqual([[1], [2, 3], [4], [5]]);
  });
});

describe('Batcher riders', () => {
  /** A batcher recording each write's items and rider, whose first write waits for release(). */
  function heldAtFirstWrite() {
    const writes: { items: number[]; rider: string | null }[] = [];
    let releaseFirst: () => void = () => undefined;
    const batcher = new Batcher<number, number, string>(async (items, rider) => {
      writes.push({ items, rider });
      if (writes.length === 1) await new Promise<void>((resolve) => (releaseFirst = resolve));
      return items;
    });
    return { batcher, writes, release: () => releaseFirst() };
  }

  it('hands a rider to the next write, with the items waiting behind the one in flight', async () => {
    const { batcher, writes, release } = heldAtFirstWrite();
    const first = batcher.submit(1);
    const waiting = [2, 3].map((n) => batcher.submit(n));
    batcher.ride('claim');
    release();
    await Promise.all([first, ...waiting]);
    expect(writes).toEqual([
      { items: [1], rider: null },
      { items: [2, 3], rider: 'claim' },
    ]);
  });

  it('writes a rider alone when no item waits, one rider per write', async () => {
    const { batcher, writes, release } = heldAtFirstWrite();
    const first = batcher.submit(1);
    batcher.ride('a');
    batcher.ride('b');
    release();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([
      { items: [1], rider: null },
      { items: [], rider: 'a' },
      { items: [], rider: 'b' },
    ]);
  });

  it('starts a write for a rider on an idle batcher', async () => {
    const riders: (string | null)[] = [];
    const batcher = new Batcher<number, number, string>(async (items, rider) => {
      riders.push(rider);
      return items;
    });
    batcher.ride('alone');
    await new Promise((resolve) => setImmediate(resolve));
    expect(riders).toEqual(['alone']);
  });

  it('keeps a rider that waits for items until the next item, and writes them together', async () => {
    const writes: { items: number[]; rider: string | null }[] = [];
    const batcher = new Batcher<number, number, string>(async (items, rider) => {
      writes.push({ items, rider });
      return items;
    });
    batcher.ride('patient', { withItems: true });
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([]);
    await batcher.submit(7);
    expect(writes).toEqual([{ items: [7], rider: 'patient' }]);
  });

  it('takes back a rider no write has got yet, and only then', async () => {
    const riders: (string | null)[] = [];
    const batcher = new Batcher<number, number, string>(async (items, rider) => {
      riders.push(rider);
      return items;
    });
    const withdraw = batcher.ride('withdrawn', { withItems: true });
    expect(withdraw()).toBe(true);
    await batcher.submit(1);
    expect(riders).toEqual([null]);
    const tooLate = batcher.ride('taken', { withItems: true });
    await batcher.submit(2);
    expect(tooLate()).toBe(false);
    expect(riders).toEqual([null, 'taken']);
  });
});
