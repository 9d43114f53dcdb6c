// The peers' delivery: the webhook Herald would send for the same event (same body shape and
// Standard Webhooks headers, HMAC-SHA256 with the application's secret), POSTed with undici.
import { createHmac } from 'node:crypto';
import { Pool } from 'undici';
import { PeerEvent, required } from './ingest';

/** What a delivery records as its job's result. */
export interface DeliveryResult {
  status: number;
  duration_ms: number;
}

/** Every application's webhook points at the same receiver with the same secret: the peers keep that configuration in memory. */
export function webhookSender(connections: number): (event: PeerEvent) => Promise<DeliveryResult> {
  const target = new URL(required('WEBHOOK_URL'));
  const key = Buffer.from(required('WEBHOOK_SECRET').replace(/^whsec_/, ''), 'base64');
  const pool = new Pool(target.origin, { connections, headersTimeout: 15_000, bodyTimeout: 15_000 });
  return async (event) => {
    const started = performance.now();
    const timestamp = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({
      id: event.id,
      type: event.type,
      application_id: event.application_id,
      timestamp: event.created_at,
      data: event.payload,
    });
    const signature = createHmac('sha256', key).update(`${event.id}.${timestamp}.${body}`).digest('base64');
    const res = await pool.request({
      method: 'POST',
      path: target.pathname,
      headers: {
        'content-type': 'application/json',
        'webhook-id': event.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': `v1,${signature}`,
      },
      body,
    });
    await res.body.dump();
    const result = { status: res.statusCode, duration_ms: Math.round(performance.now() - started) };
    if (res.statusCode < 200 || res.statusCode >= 300) throw Object.assign(new Error(`receiver answered ${res.statusCode}`), { result });
    return result;
  };
}
