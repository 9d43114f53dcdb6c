// The peers' ingest, what a team would write in front of a job queue: bare node:http, one API key
// compared, the JSON parsed and checked for an event type and an object payload, the job
// enqueued, and 202 only once the queue has acknowledged it.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';

/** What the api enqueues and the worker delivers: everything the webhook needs travels in the job. */
export interface PeerEvent {
  id: string;
  application_id: number;
  type: string;
  payload: Record<string, unknown>;
  created_at: string;
}

const ROUTE = /^\/application\/(\d+)\/events$/;

export function serveIngest(enqueue: (event: PeerEvent) => Promise<void>): void {
  const key = Buffer.from(required('PEER_KEY'));
  const server = http.createServer({ keepAliveTimeout: 10_000 }, (req, res) => {
    const answer = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    const route = req.method === 'POST' ? ROUTE.exec(req.url ?? '') : null;
    if (!route) return void (req.resume(), answer(404, { error: 'not found' }));
    const given = Buffer.from(req.headers.authorization ?? '');
    if (given.length !== key.length || !timingSafeEqual(given, key)) return void (req.resume(), answer(401, { error: 'unauthorized' }));
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: { event?: unknown; payload?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return answer(400, { error: 'invalid JSON' });
      }
      if (typeof body?.event !== 'string' || typeof body.payload !== 'object' || body.payload === null || Array.isArray(body.payload)) {
        return answer(400, { error: 'event (string) and payload (object) are required' });
      }
      const event: PeerEvent = {
        id: `evt_${randomBytes(12).toString('hex')}`,
        application_id: Number(route[1]),
        type: body.event,
        payload: body.payload as Record<string, unknown>,
        created_at: new Date().toISOString(),
      };
      enqueue(event).then(
        () => answer(202, { data: { id: event.id } }),
        (error: Error) => answer(503, { error: error.message }),
      );
    });
  });
  server.listen(Number(required('PORT')), '127.0.0.1', () => console.log('listening'));
}

export function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}
