import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TurnBatchedDestination } from './turn-batched-destination';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const line = (n: number) => `{"n":${n},"msg":"${'x'.repeat(90)}"}\n`;

describe('TurnBatchedDestination', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'herald-log-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes every line of a turn, in order, once the turn is over', async () => {
    const file = path.join(dir, 'out.log');
    const fd = openSync(file, 'w');
    const destination = new TurnBatchedDestination(fd);
    for (let n = 0; n < 1000; n++) destination.write(line(n));
    expect(readFileSync(file, 'utf8')).toBe(''); // nothing written inside the turn
    for (let turn = 0; turn < 50 && readFileSync(file).length < 1000 * line(0).length; turn++) await nextTurn();
    expect(readFileSync(file, 'utf8')).toBe(Array.from({ length: 1000 }, (_, n) => line(n)).join(''));
    closeSync(fd);
  });

  it('writes what is pending synchronously when asked at exit', () => {
    const file = path.join(dir, 'out.log');
    const fd = openSync(file, 'w');
    const destination = new TurnBatchedDestination(fd);
    destination.write(line(1));
    destination.write('{"msg":"ünïcödé"}\n');
    destination.flushSync();
    expect(readFileSync(file, 'utf8')).toBe(`${line(1)}{"msg":"ünïcödé"}\n`);
    closeSync(fd);
  });

  it('waits while the reader does not keep up, drops past its bound, and says how many it dropped', async () => {
    // A FIFO opened read-write and non-blocking: writes fail with EAGAIN once its 64 KiB are full,
    // as they do on a stdout pipe whose collector has stalled.
    const fifo = path.join(dir, 'stdout');
    execFileSync('mkfifo', [fifo]);
    const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    const dropped: number[] = [];
    const destination = new TurnBatchedDestination(fd, { maxPendingBytes: 200 * 1024, onDropped: (lines) => dropped.push(lines) });

    const written = 4000; // ~400 KiB: fills the pipe, then the bound
    const accepted = Array.from({ length: written }, (_, n) => destination.write(line(n))).filter(Boolean).length;
    expect(accepted).toBeLessThan(written);
    await new Promise((resolve) => setTimeout(resolve, 50)); // the first batch is stuck on the full pipe

    const received: Buffer[] = [];
    const buffer = Buffer.alloc(64 * 1024);
    const drain = () => {
      for (;;) {
        try {
          const n = readSync(fd, buffer);
          if (n === 0) return;
          received.push(Buffer.from(buffer.subarray(0, n)));
        } catch {
          return; // EAGAIN: empty for now
        }
      }
    };
    for (let round = 0; round < 200 && dropped.length === 0; round++) {
      drain();
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    drain();
    closeSync(fd);

    const lines = Buffer.concat(received).toString('utf8').split('\n').filter(Boolean);
    expect(dropped).toEqual([written - accepted]);
    expect(lines).toHaveLength(accepted);
    expect(lines.map((text) => (JSON.parse(text) as { n: number }).n)).toEqual(Array.from({ length: accepted }, (_, n) => n));
  });
});
