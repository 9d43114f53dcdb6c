/**
 * How far the database's clock is ahead of this process's (NTP's minimum-delay filter), to
 * turn a throttle slot — database time — into the moment this process should send.
 *
 * Each throttled claim gives a sample: the database's clock as it answered, minus this
 * process's clock when it read the answer. The answer spent time on the wire and, on a busy
 * machine, waiting to be read, so every sample is at most the true offset; the largest recent
 * one is the closest. Taking it means a slot is never sent early, and a claim whose answer was
 * read late (the process was descheduled) cannot make the slots it brought look on time.
 * Between samples the estimate sinks by DRIFT_MS_PER_SECOND, more than two NTP-disciplined
 * clocks drift apart, so it never rises above the truth; a clock that was stepped is caught
 * up with at that rate.
 */
export class DatabaseClock {
  static readonly DRIFT_MS_PER_SECOND = 10;
  private offsetMs: number | null = null;
  private observedAtMs = 0;

  /** A sample: `databaseMs` was the database's time when the answer left it, read here at `localMs`. */
  observe(databaseMs: number, localMs: number): void {
    const sample = databaseMs - localMs;
    const sunk =
      this.offsetMs === null ? -Infinity : this.offsetMs - ((localMs - this.observedAtMs) / 1000) * DatabaseClock.DRIFT_MS_PER_SECOND;
    this.offsetMs = Math.max(sample, sunk);
    this.observedAtMs = localMs;
  }

  /** The local time of a database time; only after a sample. */
  toLocal(databaseMs: number): number {
    if (this.offsetMs === null) throw new Error('DatabaseClock.toLocal before any sample');
    return databaseMs - this.offsetMs;
  }
}
