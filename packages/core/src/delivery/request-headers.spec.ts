import { loggedRequestHeaders, sentRequestHeaders, webhookTimestamp } from './request-headers';

describe('an attempt’s logged request headers', () => {
  const eventId = 'evt_01JQ3Z6Y8N2C4V5B7M9K1H3G5F';
  const startedAt = new Date('2026-11-27T15:04:05.678Z');
  const sent = {
    'content-type': 'application/json',
    'user-agent': 'Herald/1.0.0',
    'x-tenant': 'acme',
    'webhook-id': eventId,
    'webhook-timestamp': webhookTimestamp(startedAt),
    'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  };

  it('leaves out what the attempt’s row says again, and puts it back where it was sent, in order', () => {
    const logged = loggedRequestHeaders(sent, eventId, startedAt);
    expect(logged).toEqual({
      'user-agent': 'Herald/1.0.0',
      'x-tenant': 'acme',
      'webhook-signature': sent['webhook-signature'],
      traceparent: sent.traceparent,
    });
    // Stored as JSON (key order kept) and read back.
    const restored = sentRequestHeaders(JSON.parse(JSON.stringify(logged)), eventId, startedAt);
    expect(Object.entries(restored)).toEqual(Object.entries(sent));
    expect(webhookTimestamp(startedAt)).toBe('1795791845');
  });

  it('keeps as sent a request laid out otherwise: another content type, id, timestamp or order', () => {
    const others = [
      { ...sent, 'content-type': 'application/cloudevents+json' },
      { ...sent, 'webhook-id': 'evt_another' },
      { ...sent, 'webhook-timestamp': '1795791846' },
      { 'content-type': 'application/json', 'webhook-signature': 'v1,abc' },
      // The content type after another header.
      { 'x-first': '1', ...sent },
      // The id and the timestamp the other way round.
      Object.fromEntries(Object.entries(sent).map(([name, value], i, all) => (i === 3 ? all[4] : i === 4 ? all[3] : [name, value]))),
      { 'x-only': '1' },
    ];
    for (const headers of others) {
      expect(loggedRequestHeaders(headers, eventId, startedAt)).toBe(headers);
      expect(sentRequestHeaders(headers, eventId, startedAt)).toEqual(headers);
    }
  });

  it('reads a log kept whole (as every attempt before this was) as it is', () => {
    expect(sentRequestHeaders(sent, eventId, startedAt)).toEqual(sent);
    expect(sentRequestHeaders({ 'content-type': 'application/json' }, eventId, startedAt)).toEqual({ 'content-type': 'application/json' });
  });
});
