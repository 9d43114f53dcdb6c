import { DEFAULT_RESTART_POLICY, NO_RESTARTS, planRestart, RestartDecision, RestartHistory, restartDelay } from './restart-policy';

/** Plays a sequence of runs (how long each stayed up, then the wait before the next start). */
function play(uptimesMs: number[], from: RestartHistory = NO_RESTARTS): RestartDecision[] {
  const decisions: RestartDecision[] = [];
  let history = from;
  let now = 1_000_000;
  for (const uptime of uptimesMs) {
    const decision = planRestart(history, { startedAt: now, exitedAt: now + uptime });
    decisions.push(decision);
    history = decision.history;
    now += uptime + (decision.action === 'restart' ? decision.delayMs : 0);
  }
  return decisions;
}

const delays = (decisions: RestartDecision[]) => decisions.map((d) => (d.action === 'restart' ? d.delayMs : d.action));

describe('restartDelay', () => {
  it('starts at 0.5 s and doubles with each quick exit in a row, up to 15 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((streak) => restartDelay(streak))).toEqual([
      500, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000,
    ]);
  });

  it('stays at the cap for any streak, however long', () => {
    expect(restartDelay(5_000)).toBe(15_000);
  });

  it('follows the policy it is given', () => {
    expect(restartDelay(3, { ...DEFAULT_RESTART_POLICY, initialDelayMs: 100, maxDelayMs: 500 })).toBe(500);
    expect(restartDelay(2, { ...DEFAULT_RESTART_POLICY, initialDelayMs: 100, maxDelayMs: 500 })).toBe(400);
  });
});

describe('planRestart', () => {
  it('restarts a process that ran well after the initial delay, and counts the restart', () => {
    expect(planRestart(NO_RESTARTS, { startedAt: 0, exitedAt: 3_600_000 })).toEqual({
      action: 'restart',
      delayMs: 500,
      history: { restarts: 1, streak: 1, recentExits: [3_600_000] },
    });
  });

  it('doubles the wait while a process keeps dying soon after it starts', () => {
    // Four quick exits: the fifth within the minute would stop Herald, so stop short of it.
    expect(delays(play([2_000, 2_000, 2_000, 2_000]))).toEqual([500, 1_000, 2_000, 4_000]);
  });

  it('goes back to the initial delay once a process has stayed up 30 s', () => {
    const decisions = play([1_000, 1_000, 30_000, 1_000]);
    expect(delays(decisions)).toEqual([500, 1_000, 500, 1_000]);
    expect(decisions[3].history.restarts).toBe(4);
  });

  it('does not reset after 29.9 s up', () => {
    expect(delays(play([1_000, 1_000, 29_900]))).toEqual([500, 1_000, 2_000]);
  });

  it('gives up at the fifth exit within a minute', () => {
    const decisions = play([1_000, 1_000, 1_000, 1_000, 1_000]);
    expect(delays(decisions)).toEqual([500, 1_000, 2_000, 4_000, 'give_up']);
    expect(decisions[4].history.recentExits).toHaveLength(5);
  });

  it('counts only the exits of the last minute', () => {
    // Each run lasts 14 s, then the growing wait: exits 14.5 s, 15 s, 16 s, 18 s … apart, never five in a minute.
    const decisions = play(Array(12).fill(14_000));
    expect(decisions.every((decision) => decision.action === 'restart')).toBe(true);
    expect(delays(decisions).slice(0, 7)).toEqual([500, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000]);
    expect(decisions[11].history.restarts).toBe(12);
    expect(decisions[11].history.recentExits.length).toBeLessThan(5);
  });

  it('keeps restarting a process that crashes now and then, however often over its life', () => {
    const decisions = play(Array(50).fill(45_000));
    expect(new Set(delays(decisions))).toEqual(new Set([500]));
    expect(decisions[49].history.restarts).toBe(50);
  });

  it('does not change the history it is given', () => {
    const history: RestartHistory = { restarts: 2, streak: 2, recentExits: [10] };
    planRestart(history, { startedAt: 20, exitedAt: 30 });
    expect(history).toEqual({ restarts: 2, streak: 2, recentExits: [10] });
  });
});
