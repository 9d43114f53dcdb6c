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
  it('wakes for anything before the first claim, and always for a notification without a transaction id', () => {
    const news = new NewDeliveries();
    expect(news.notified('101')).toBe(true);
    news.claimStarted();
    expect(news.claimEnded('200:200:', false)).toBe(false);
    expect(news.notified('')).toBe(true);
    expect(news.notified('resume')).toBe(true);
  });

  it('passes over a publish the last claim saw when that claim left nothing due', () => {
    const news = new NewDeliveries();
    news.claimStarted();
    news.claimEnded('100:105:102', false);
    expect(news.notified('101')).toBe(false);
    // In progress when the claim read the queue, or begun after: news.
    expect(news.notified('102')).toBe(true);
    expect(news.notified('105')).toBe(true);
  });

  it('wakes for every publish after a claim that left work (or found work locked by another claim), or that failed', () => {
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

    news.claimStarted();
    expect(news.notified('101')).toBe(false);
    expect(news.notified('103')).toBe(false);
    // 103 committed after the claim read the queue: claim again.
    expect(news.claimEnded('102:103:', false)).toBe(true);

    // Seen, but the claim left work (or found it locked by another claim): claim again.
    news.claimStarted();
    expect(news.notified('101')).toBe(false);
    expect(news.claimEnded('102:102:', true)).toBe(true);
    expect(news.notified('101')).toBe(true);

    // A failed claim saw nothing.
    news.claimStarted();
    expect(news.notified('101')).toBe(false);
    expect(news.claimEnded(null, true)).toBe(true);
  });
});
