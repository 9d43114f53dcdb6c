import { NewDeliveries, parseSnapshot, visibleIn } from './new-deliveries';

describe('visibleIn', () => {
  const snapshot = parseSnapshot('100:110:103,107');

  it("reads PostgreSQL's snapshot text, with and without transactions in progress", () => {
    expect(snapshot).toEqual({ xmin: 100n, xmax: 110n, inProgress: new Set([103n, 107n]) });
    expect(parseSnapshot('5:5:')).toEqual({ xmin: 5n, xmax: 5n, inProgress: new Set() });
    expect(parseSnapshot('not a snapshot')).toBeNull();
  });

  it('sees transactions done before the snapshot, not those in progress in it or begun after', () => {
    expect([99n, 100n, 102n, 109n].map((id) => visibleIn(id, snapshot))).toEqual([true, true, true, true]);
    expect([103n, 107n, 110n, 111n].map((id) => visibleIn(id, snapshot))).toEqual([false, false, false, false]);
    expect(visibleIn(1n, null)).toBe(false);
  });
});

describe('NewDeliveries', () => {
  it('is news at start, and anything without a transaction id always is', () => {
    const news = new NewDeliveries();
    expect(news.hasNews).toBe(true);
    news.claimStarted();
    expect(news.claimEnded('100:100:', false)).toBe(false);
    expect(news.hasNews).toBe(false);
    expect(news.notified('')).toBe(true);
    expect(news.hasNews).toBe(true);
  });

  it('passes over a publish the last claim saw when it took everything it saw due', () => {
    const news = new NewDeliveries();
    news.claimStarted();
    news.claimEnded('100:105:102', false);
    expect(news.notified('101')).toBe(false);
    expect(news.hasNews).toBe(false);
    // In progress when the claim read the queue, or begun after: news.
    expect(news.notified('102')).toBe(true);
    expect(news.notified('105')).toBe(true);
    expect(news.hasNews).toBe(true);
  });

  it('wakes for every publish after a claim that left work, or that failed', () => {
    const news = new NewDeliveries();
    news.claimStarted();
    news.claimEnded('100:105:', true);
    expect(news.notified('101')).toBe(true);
    news.claimStarted();
    news.claimEnded(null, false);
    expect(news.notified('101')).toBe(true);
  });

  it('holds what is notified during a claim until its snapshot says whether it saw it', () => {
    const news = new NewDeliveries();
    news.claimStarted();
    expect(news.notified('101')).toBe(false);
    expect(news.claimEnded('102:102:', false)).toBe(false);
    expect(news.hasNews).toBe(false);

    news.claimStarted();
    expect(news.notified('101')).toBe(false);
    expect(news.notified('103')).toBe(false);
    // 103 committed after the claim read the queue: claim again.
    expect(news.claimEnded('102:103:', false)).toBe(true);
    expect(news.hasNews).toBe(true);

    // A failed claim saw nothing.
    news.claimStarted();
    expect(news.notified('101')).toBe(false);
    expect(news.claimEnded(null, true)).toBe(true);
  });

  it('takes a reconnect as news: notifications sent meanwhile are lost', () => {
    const news = new NewDeliveries();
    news.claimStarted();
    news.claimEnded('100:100:', false);
    news.reconnected();
    expect(news.hasNews).toBe(true);
  });
});
