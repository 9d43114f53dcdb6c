import { write, writeSync } from 'node:fs';

/**
 * Lines pending past this (not counting the batch being written) are dropped and counted rather
 * than held: a stalled collector must not exhaust memory. Measured in string length, which is the
 * byte count for the ASCII a log line mostly is.
 */
export const MAX_PENDING_BYTES = 16 * 1024 * 1024;
/** How long to wait before trying again when a non-blocking descriptor is full. */
const RETRY_FULL_MS = 10;
/** How long flushSync() may wait, at exit, for a full descriptor to take the last lines. */
const EXIT_FLUSH_DEADLINE_MS = 2_000;
/** Lines pending past this leave at the end of the turn, whatever the gathering window. */
export const FULL_BATCH_BYTES = 64 * 1024;

export interface BatchedDestinationOptions {
  maxPendingBytes?: number;
  /**
   * How long a line may wait for others to join it in one write; 0 (the default): the lines of
   * one event-loop turn only.
   */
  gatherMs?: number;
  /**
   * Told how many lines were dropped because more than `maxPendingBytes` were pending. Called
   * once writing goes on, after the lines pending then have been handed to the next write, so a
   * line it logs through the same logger fits and follows them.
   */
  onDropped?: (lines: number) => void;
}

/**
 * The stream pino writes its lines to: the lines logged within `gatherMs` of the first one (or in
 * its event-loop turn, without a window, or once 64 KiB are pending) leave in one asynchronous
 * write(2), and lines logged while a write is in flight go in the next one. A write costs the
 * process more than the lines in it: on Linux libuv submits it through io_uring, which runs a
 * pipe write inline in the submitting thread, waking the reader (the container's log collector).
 * At the api's rate, one write per turn was about a line per write, and writing them cost a fifth
 * of the api's CPU per publish (issue 21: bench/README.md).
 * Logging never blocks the process on a slow stdout; a full non-blocking stdout (EAGAIN) is tried
 * again every 10 ms, which keeps a process with lines to write alive while its collector stalls,
 * as pino's own destination does. A stdout that fails otherwise (EPIPE, EBADF: the collector is
 * gone) is given up: later lines are dropped without any further write.
 *
 * Written here rather than using pino.destination() (sonic-boom): with lines pending, sonic-boom
 * appends each to one string and measures that string's UTF-8 length again for every line, which
 * flattens and copies everything pending — under the api's load each access-log line paid for a
 * copy of up to 16 KiB. Measured in issue 12: 3.5 → 2.5 µs of CPU per line in a loop, and the
 * api's read throughput +10–15% (bench/README.md).
 */
export class BatchedDestination {
  private readonly maxPendingBytes: number;
  private readonly gatherMs: number;
  private readonly onDropped: (lines: number) => void;
  private pending: string[] = [];
  private pendingBytes = 0;
  /** The batch being written, and how much of it the descriptor has taken. */
  private batch: Buffer | null = null;
  private taken = 0;
  /** Whether an fs.write of the batch is under way in libuv's thread pool (not just a retry timer). */
  private writing = false;
  private retry: NodeJS.Timeout | null = null;
  private flushScheduled = false;
  /** The gathering window's timer, while one runs. */
  private gathering: NodeJS.Timeout | null = null;
  private dropped = 0;
  private broken = false;

  constructor(
    private readonly fd: number,
    { maxPendingBytes = MAX_PENDING_BYTES, gatherMs = 0, onDropped = () => {} }: BatchedDestinationOptions = {},
  ) {
    this.maxPendingBytes = maxPendingBytes;
    this.gatherMs = gatherMs;
    this.onDropped = onDropped;
  }

  /** pino's stream interface: one serialised line, newline included. */
  write(line: string): boolean {
    if (this.broken) return false;
    if (this.pendingBytes + line.length > this.maxPendingBytes) {
      this.dropped++;
      return false;
    }
    this.pending.push(line);
    this.pendingBytes += line.length;
    if (this.batch === null) this.scheduleFlush();
    return true;
  }

  /** The pending lines' write: at the end of the turn when the window is 0 or they fill a batch, else when the window closes. */
  private scheduleFlush(): void {
    const now = this.gatherMs === 0 || this.pendingBytes >= FULL_BATCH_BYTES;
    if (now && this.gathering) {
      clearTimeout(this.gathering);
      this.gathering = null;
      this.flushScheduled = false;
    }
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    if (now) {
      setImmediate(() => this.flush());
    } else {
      this.gathering = setTimeout(() => {
        this.gathering = null;
        this.flush();
      }, this.gatherMs);
    }
  }

  /**
   * Writes what has not been written, synchronously; for the process's exit. A batch waiting to be
   * tried again goes first; a batch whose write is under way in the thread pool is left to it (it
   * cannot be waited for here, and writing it again could duplicate or interleave it), so the lines
   * pending after it may land before it. A full descriptor is waited for up to 2 s.
   */
  flushSync(): void {
    if (this.broken) return;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    if (this.gathering) {
      clearTimeout(this.gathering);
      this.gathering = null;
      this.flushScheduled = false;
    }
    const unwritten = this.batch && !this.writing ? this.batch.subarray(this.taken) : Buffer.alloc(0);
    const chunk = Buffer.concat([unwritten, Buffer.from(this.takePending())]);
    if (!this.writing) this.batch = null;
    const deadline = Date.now() + EXIT_FLUSH_DEADLINE_MS;
    for (let offset = 0; offset < chunk.length;) {
      try {
        offset += writeSync(this.fd, chunk, offset, chunk.length - offset);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() > deadline) return;
        sleepSync(RETRY_FULL_MS);
      }
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.gathering) clearTimeout(this.gathering);
    this.gathering = null;
    if (this.broken || this.batch !== null || this.pending.length === 0) return;
    this.batch = Buffer.from(this.takePending());
    this.taken = 0;
    this.writeBatch();
  }

  private takePending(): string {
    const text = this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    return text;
  }

  private writeBatch(): void {
    const batch = this.batch!;
    this.writing = true;
    write(this.fd, batch, this.taken, batch.length - this.taken, null, (error, written) => {
      this.writing = false;
      if (this.batch !== batch) return; // flushSync took over
      if (error?.code === 'EAGAIN') {
        this.retry = setTimeout(() => {
          this.retry = null;
          if (this.batch === batch) this.writeBatch();
        }, RETRY_FULL_MS);
        return;
      }
      if (error) {
        this.giveUp();
        return;
      }
      this.taken += written;
      if (this.taken < batch.length) {
        this.writeBatch();
        return;
      }
      this.batch = null;
      // After lines were dropped (the reader fell behind), what is pending goes at once, making
      // room for the warning; otherwise it waits for its window like any line.
      if (this.dropped > 0) this.flush();
      else if (this.pending.length > 0) this.scheduleFlush();
      if (this.dropped > 0) {
        const lines = this.dropped;
        this.dropped = 0;
        this.onDropped(lines);
      }
    });
  }

  private giveUp(): void {
    this.broken = true;
    this.batch = null;
    this.pending = [];
    this.pendingBytes = 0;
  }
}

/** Blocks the thread (at exit only, where nothing else is left to run). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
