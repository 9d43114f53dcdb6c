import { DELIVERY_CHANNEL } from '@herald/database';
import pg from 'pg';

/**
 * LISTENs for the NOTIFY the api sends when it commits a delivery, on one dedicated connection
 * (never a pooled one). If the connection drops it reconnects with backoff and wakes the loop
 * once, because notifications sent meanwhile are lost; the loop's polling covers the gap.
 */
export class WakeUpListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private retryDelayMs = 500;

  constructor(
    private readonly databaseUrl: string,
    private readonly onWake: () => void,
    private readonly onError: (error: Error) => void,
  ) {}

  async start(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on('notification', () => this.onWake());
    client.on('error', (error) => this.reconnectLater(client, error));
    client.on('end', () => this.reconnectLater(client, new Error('LISTEN connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${DELIVERY_CHANNEL}`);
      this.client = client;
      this.retryDelayMs = 500;
      this.onWake();
    } catch (error) {
      this.reconnectLater(client, error as Error);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private reconnectLater(client: pg.Client, error: Error): void {
    if (this.stopped || (this.client !== null && this.client !== client)) return;
    this.client = null;
    client.removeAllListeners();
    client.on('error', () => undefined);
    client.end().catch(() => undefined);
    this.onError(error);
    const delay = this.retryDelayMs;
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, 30_000);
    setTimeout(() => void this.start(), delay).unref();
  }
}
