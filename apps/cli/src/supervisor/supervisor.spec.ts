import { HERALD_NODE_FLAGS } from '@herald/core';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Clock, Exit, ServiceSpec, spawnNode, SupervisedProcess, Supervisor } from './supervisor';

/** A clock that moves only when the test says so. */
class FakeClock implements Clock {
  private time = 0;
  private timers: { at: number; callback: () => void }[] = [];

  now(): number {
    return this.time;
  }

  schedule(callback: () => void, ms: number): () => void {
    const timer = { at: this.time + ms, callback };
    this.timers.push(timer);
    return () => (this.timers = this.timers.filter((t) => t !== timer));
  }

  pending(): number[] {
    return this.timers.map((timer) => timer.at - this.time).sort((a, b) => a - b);
  }

  /** Moves time forward, firing due timers in order; settles promises after each. */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    for (;;) {
      const next = this.timers.filter((timer) => timer.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.timers = this.timers.filter((timer) => timer !== next);
      this.time = next.at;
      next.callback();
      await settle();
    }
    this.time = until;
    await settle();
  }
}

class FakeProcess implements SupervisedProcess {
  readonly signals: NodeJS.Signals[] = [];
  readonly exited: Promise<Exit>;
  private resolve!: (exit: Exit) => void;
  alive = true;

  constructor(
    readonly name: string,
    public pid: number | undefined,
    /** Whether SIGTERM makes it exit (a stuck process ignores it). */
    private readonly obeysSigterm = true,
  ) {
    this.exited = new Promise((resolve) => (this.resolve = resolve));
  }

  kill(signal: NodeJS.Signals): void {
    this.signals.push(signal);
    if (signal === 'SIGKILL' || this.obeysSigterm)
      this.die({ code: signal === 'SIGTERM' ? 0 : null, signal: signal === 'SIGKILL' ? signal : null });
  }

  die(exit: Exit): void {
    if (!this.alive) return;
    this.alive = false;
    this.resolve(exit);
  }
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

const SERVICES: ServiceSpec[] = [
  { name: 'api', entry: 'api.js', env: {} },
  { name: 'worker', entry: 'worker.js', env: {} },
];

function harness(options: { obeysSigterm?: boolean } = {}) {
  const clock = new FakeClock();
  const spawned: FakeProcess[] = [];
  const lines: string[] = [];
  let nextPid = 100;
  const supervisor = new Supervisor({
    clock,
    log: (line) => lines.push(line),
    spawn: (service) => {
      const child = new FakeProcess(service.name, nextPid++, options.obeysSigterm ?? true);
      spawned.push(child);
      return child;
    },
  });
  const latest = (name: string) => spawned.filter((child) => child.name === name).at(-1) as FakeProcess;
  const alive = () =>
    spawned
      .filter((child) => child.alive)
      .map((child) => child.name)
      .sort();
  return { clock, spawned, lines, supervisor, latest, alive };
}

describe('Supervisor', () => {
  it('restarts a process that died after the backoff, leaving the other running, and logs one line', async () => {
    const { clock, supervisor, lines, latest, alive, spawned } = harness();
    let finished: number | undefined;
    void supervisor.run(SERVICES).then((code) => (finished = code));
    const api = latest('api');
    await clock.advance(60_000);

    latest('worker').die({ code: null, signal: 'SIGKILL' });
    await settle();
    expect(alive()).toEqual(['api']);
    expect(lines).toEqual(['herald: worker (pid 101) was killed by SIGKILL after 60 s up; restarting it in 0.5 s (restart 1)']);
    expect(clock.pending()).toEqual([500]);

    await clock.advance(499);
    expect(alive()).toEqual(['api']);
    await clock.advance(1);
    expect(alive()).toEqual(['api', 'worker']);
    expect(latest('worker').pid).toBe(102);
    expect(latest('api')).toBe(api);
    expect(api.signals).toEqual([]);
    expect(spawned).toHaveLength(3);
    expect(supervisor.restarts('worker')).toBe(1);
    expect(supervisor.restarts('api')).toBe(0);
    expect(finished).toBeUndefined();
  });

  it('doubles the wait while a process keeps failing soon after it starts', async () => {
    const { clock, supervisor, lines, latest } = harness();
    void supervisor.run(SERVICES);
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      await clock.advance(1_000);
      latest('api').die({ code: 1, signal: null });
      await settle();
      waits.push(clock.pending()[0]);
      await clock.advance(clock.pending()[0]);
    }
    expect(waits).toEqual([500, 1_000, 2_000, 4_000]);
    expect(lines.at(-1)).toBe('herald: api (pid 104) exited with code 1 after 1 s up; restarting it in 4 s (restart 4)');
  });

  it('stops everything with exit code 1 and one line at the fifth exit within a minute', async () => {
    const { clock, supervisor, lines, latest, alive } = harness();
    let finished: number | undefined;
    void supervisor.run(SERVICES).then((code) => (finished = code));
    for (let i = 0; i < 5; i++) {
      await clock.advance(1_000);
      latest('worker').die({ code: 1, signal: null });
      await settle();
      if (i < 4) await clock.advance(clock.pending()[0]);
    }
    expect(lines.at(-1)).toBe('herald: worker stopped 5 times within 60 s (last: worker (pid 105) exited with code 1); stopping Herald');
    expect(lines).toHaveLength(5);
    expect(latest('api').signals).toEqual(['SIGTERM']);
    expect(alive()).toEqual([]);
    expect(finished).toBe(1);
  });

  it('on stop, passes SIGTERM to both, restarts nothing, and resolves 0 once both have gone', async () => {
    const { clock, supervisor, spawned, latest } = harness();
    let finished: number | undefined;
    void supervisor.run(SERVICES).then((code) => (finished = code));
    await clock.advance(5_000);
    const stopped = supervisor.stop();
    await settle();
    expect(spawned.map((child) => child.signals)).toEqual([['SIGTERM'], ['SIGTERM']]);
    await stopped;
    await clock.advance(60_000);
    expect(spawned).toHaveLength(2);
    expect(latest('api').alive).toBe(false);
    expect(finished).toBe(0);
  });

  it('cancels a restart that was waiting when the stop came', async () => {
    const { clock, supervisor, spawned, latest } = harness();
    let finished: number | undefined;
    void supervisor.run(SERVICES).then((code) => (finished = code));
    latest('worker').die({ code: 1, signal: null });
    await settle();
    expect(clock.pending()).toEqual([500]);
    await supervisor.stop();
    await clock.advance(60_000);
    expect(spawned).toHaveLength(2);
    expect(finished).toBe(0);
  });

  it('kills with SIGKILL what has not exited 30 s after SIGTERM', async () => {
    const { clock, supervisor, spawned } = harness({ obeysSigterm: false });
    let finished: number | undefined;
    void supervisor.run(SERVICES).then((code) => (finished = code));
    void supervisor.stop();
    await clock.advance(29_999);
    expect(spawned.map((child) => child.signals)).toEqual([['SIGTERM'], ['SIGTERM']]);
    expect(finished).toBeUndefined();
    await clock.advance(1);
    expect(spawned.map((child) => child.signals)).toEqual([
      ['SIGTERM', 'SIGKILL'],
      ['SIGTERM', 'SIGKILL'],
    ]);
    expect(finished).toBe(0);
  });

  it('names a process that could not be started at all', async () => {
    const { clock, supervisor, lines, latest } = harness();
    void supervisor.run(SERVICES);
    const api = latest('api');
    api.pid = undefined; // as for a real child that failed to spawn
    api.die({ code: null, signal: null, error: new Error('spawn ENOMEM') });
    await settle();
    expect(lines).toEqual(['herald: api could not be started (spawn ENOMEM); restarting it in 0.5 s (restart 1)']);
    await clock.advance(500);
    expect(latest('api').pid).toBe(102);
  });
});

describe('spawnNode', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'herald-spawn-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Starts `spawnNode` on a script that writes the flags its process was started with, and reads them back. */
  async function flagsOfChild(env: NodeJS.ProcessEnv): Promise<string[]> {
    const entry = path.join(dir, 'entry.js');
    const out = path.join(dir, 'flags.json');
    writeFileSync(entry, `require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.execArgv));`);
    const child = spawnNode({ name: 'api', entry, env: { PATH: process.env.PATH, ...env } });
    expect(await child.exited).toEqual({ code: 0, signal: null });
    return JSON.parse(readFileSync(out, 'utf8')) as string[];
  }

  it("starts a service with Herald's Node flags", async () => {
    expect(await flagsOfChild({})).toEqual([...HERALD_NODE_FLAGS]);
  });

  it('leaves them to NODE_OPTIONS when the operator set them there', async () => {
    expect(await flagsOfChild({ NODE_OPTIONS: '--max-semi-space-size=32' })).toEqual([]);
  });
});
