import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs, { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BatchedDestination, FULL_BATCH_BYTES } from './batched-destination';

const line = (n: number) => `{"n":${n},"msg":"${'x'.repeat(90)}"}\n`;
const lines = (from: number, count: number) => Array.from({ length: count }, (_, k) => line(from + k)).join('');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  for (const deadline = Date.now() + ms; !check(); await sleep(5)) {
    if (Date.now() > deadline) throw new Error('timed out');
  }
}

/** A FIFO opened read-write and non-blocking: writes fail with EAGAIN once its 64 KiB are full, as on a stalled stdout pipe. */
function fullableFifo(dir: string): { fd: number; path: string; drain: () => string } {
  const fifo = path.join(dir, 'stdout');
  execFileSync('mkfifo', [fifo]);
  const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
  const buffer = Buffer.alloc(64 * 1024);
  const drain = () => {
    let text = '';
    for (;;) {
      try {
        const n = readSync(fd, buffer);
        if (n === 0) return text;
        text += buffer.toString('utf8', 0, n);
      } catch {
        return text; // EAGAIN: empty for now
      }
    }
  };
  return { fd, path: fifo, drain };
}

describe('BatchedDestination', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'herald-log-'))));
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes every line of a turn, in order, in one write once the turn is over', async () => {
    const file = path.join(dir, 'out.log');
    const fd = openSync(file, 'w');
    const writes = jest.spyOn(fs, 'write');
    const destination = new BatchedDestination(fd);
    for (let n = 0; n < 1000; n++) destination.write(line(n));
    expect(readFileSync(file, 'utf8')).toBe(''); // nothing written inside the turn
    await until(() => readFileSync(file).length >= lines(0, 1000).length);
    expect(readFileSync(file, 'utf8')).toBe(lines(0, 1000));
    expect(writes).toHaveBeenCalledTimes(1);
    closeSync(fd);
  });

  it('gathers the lines of several turns within its window into one write, and writes a full batch at the end of its turn', async () => {
    const file = path.join(dir, 'out.log');
    const fd = openSync(file, 'w');
    const writes = jest.spyOn(fs, 'write');
    const destination = new BatchedDestination(fd, { gatherMs: 200 });
    for (let n = 0; n < 5; n++) {
      destination.write(line(n));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await sleep(50);
    expect(readFileSync(file, 'utf8')).toBe(''); // still inside the window
    await until(() => readFileSync(file).length >= lines(0, 5).length);
    expect(readFileSync(file, 'utf8')).toBe(lines(0, 5));
    expect(writes).toHaveBeenCalledTimes(1);

    const full = Math.ceil(FULL_BATCH_BYTES / line(0).length);
    const started = Date.now();
    for (let n = 5; n < 5 + full; n++) destination.write(line(n));
    await until(() => readFileSync(file).length >= lines(0, 5 + full).length);
    expect(Date.now() - started).toBeLessThan(150);
    expect(readFileSync(file, 'utf8')).toBe(lines(0, 5 + full));
    expect(writes).toHaveBeenCalledTimes(2);
    closeSync(fd);
  });

  it('writes what is pending synchronously when asked at exit', () => {
    const file = path.join(dir, 'out.log');
    const fd = openSync(file, 'w');
    const destination = new BatchedDestination(fd);
    destination.write(line(1));
    destination.write('{"msg":"ünïcödé"}\n');
    destination.flushSync();
    expect(readFileSync(file, 'utf8')).toBe(`${line(1)}{"msg":"ünïcödé"}\n`);
    closeSync(fd);
  });

  it('waits while the reader does not keep up, drops past its bound, and logs the right count after what it kept', async () => {
    const { fd, drain } = fullableFifo(dir);
    const destination = new BatchedDestination(fd, {
      maxPendingBytes: 100 * 1024,
      // As createHeraldLogger does: the warning goes through the same destination, and is no
      // shorter than the lines that were refused.
      onDropped: (count) => destination.write(`{"dropped":${count},"msg":"${'w'.repeat(100)}"}\n`),
    });

    // Lines over many turns while nobody reads: the pipe fills, then the bound is reached.
    let written = 0;
    let accepted = 0;
    for (let turn = 0; turn < 40; turn++) {
      for (let k = 0; k < 100; k++, written++) if (destination.write(line(written))) accepted++;
      await sleep(1);
    }
    expect(accepted).toBeLessThan(written);

    let output = '';
    await until(() => {
      output += drain();
      return output.includes('dropped');
    });
    await sleep(30);
    output += drain();
    closeSync(fd);

    const received = output.split('\n').filter(Boolean);
    expect(JSON.parse(received.at(-1)!)).toEqual({ dropped: written - accepted, msg: 'w'.repeat(100) });
    const kept = received.slice(0, -1).map((text) => (JSON.parse(text) as { n: number }).n);
    expect(kept).toHaveLength(accepted);
    expect(kept).toEqual([...kept].sort((a, b) => a - b)); // in order, gaps where lines were dropped
  });

  it('gives up on a descriptor that fails other than by being full, without writing again', async () => {
    const writes = jest.spyOn(fs, 'write');
    const dropped: number[] = [];
    const destination = new BatchedDestination(987_654, { onDropped: (count) => dropped.push(count) }); // never open: EBADF
    destination.write(line(1));
    await until(() => writes.mock.calls.length === 1);
    await sleep(50);
    for (let turn = 0; turn < 5; turn++) {
      expect(destination.write(line(turn))).toBe(false);
      await sleep(5);
    }
    destination.flushSync();
    expect(writes).toHaveBeenCalledTimes(1);
    expect(dropped).toEqual([]);
  });

  it('at exit, waits for a full descriptor to take the last lines instead of losing them', async () => {
    const { fd, path: fifo } = fullableFifo(dir);
    const filler = 'f'.repeat(1023) + '\n';
    let filled = 0;
    try {
      for (;;) filled += writeSync(fd, filler);
    } catch {
      // EAGAIN: the pipe is full
    }
    const destination = new BatchedDestination(fd);
    for (let n = 0; n < 100; n++) destination.write(line(n));

    // A reader that starts only once flushSync is already waiting on the full pipe.
    const out = path.join(dir, 'received.log');
    const reader = spawn('sh', ['-c', `sleep 0.2; cat "${fifo}" > "${out}"`], { stdio: 'ignore' });
    destination.flushSync();
    closeSync(fd); // the last writer gone: cat reads to the end and exits
    await once(reader, 'exit');

    const received = readFileSync(out, 'utf8');
    expect(received.length).toBe(filled + lines(0, 100).length);
    expect(received.endsWith(lines(0, 100))).toBe(true);
  });
});
