/**
 * When `herald start` restarts a process that died, and when it gives up (PRODUCT.md §7).
 * Pure functions of the process's history and injected times, so the policy is unit-tested
 * without processes or clocks.
 */
export interface RestartPolicy {
  /** The wait before restarting a process that had been running well. */
  initialDelayMs: number;
  /** Doubling stops here: a process that keeps dying is retried at this pace. */
  maxDelayMs: number;
  /** A process that stayed up this long was healthy: its next restart waits initialDelayMs again. */
  stableAfterMs: number;
  /** This many exits of one process within failureWindowMs stop Herald... */
  maxExitsInWindow: number;
  /** ...because a process that dies that often is failing at start-up, not crashing now and then. */
  failureWindowMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 500,
  maxDelayMs: 15_000,
  stableAfterMs: 30_000,
  maxExitsInWindow: 5,
  failureWindowMs: 60_000,
};

/** What the supervisor remembers about one process across its restarts. */
export interface RestartHistory {
  /** Restarts so far, for the log line (and for whoever reads it). */
  readonly restarts: number;
  /** Quick exits in a row; each one doubles the next wait. */
  readonly streak: number;
  /** When the process exited, for the exits still inside the failure window. */
  readonly recentExits: readonly number[];
}

export const NO_RESTARTS: RestartHistory = { restarts: 0, streak: 0, recentExits: [] };

export type RestartDecision =
  { action: 'restart'; delayMs: number; history: RestartHistory } | { action: 'give_up'; history: RestartHistory };

/** The wait before a restart after `streak` quick exits in a row: 0.5 s, 1 s, 2 s, … up to the cap. */
export function restartDelay(streak: number, policy: RestartPolicy = DEFAULT_RESTART_POLICY): number {
  // A very long streak makes the power Infinity, which the cap absorbs.
  return Math.min(policy.initialDelayMs * 2 ** streak, policy.maxDelayMs);
}

/**
 * Decides what follows one exit of a process that was started at `startedAt` and exited at
 * `exitedAt` (milliseconds on any one clock).
 */
export function planRestart(
  history: RestartHistory,
  run: { startedAt: number; exitedAt: number },
  policy: RestartPolicy = DEFAULT_RESTART_POLICY,
): RestartDecision {
  const recentExits = [...history.recentExits.filter((at) => run.exitedAt - at < policy.failureWindowMs), run.exitedAt];
  if (recentExits.length >= policy.maxExitsInWindow) {
    return { action: 'give_up', history: { ...history, recentExits } };
  }
  const ranWell = run.exitedAt - run.startedAt >= policy.stableAfterMs;
  const streak = ranWell ? 0 : history.streak;
  return {
    action: 'restart',
    delayMs: restartDelay(streak, policy),
    history: { restarts: history.restarts + 1, streak: streak + 1, recentExits },
  };
}
