import pg from 'pg';

/** Sent by revocations so every api process drops the key from its cache at once. */
export const API_KEY_CHANNEL = 'herald_api_keys';

/** Sent by changes to an event type (its name) so every api process drops the schema it compiled. */
export const EVENT_TYPE_CHANNEL = 'herald_event_types';

/**
 * Sent by a trigger on `subscriptions` ("<application id>:<event type>") whenever a subscription
 * is created or deleted or its filter changes, so every api process drops the filter it compiled.
 */
export const SUBSCRIPTION_CHANNEL = 'herald_subscriptions';

/**
 * LISTENs on one channel over a dedicated connection (never a pooled one). If the connection
 * drops it reconnects with backoff and reports `onReconnected`, because notifications sent
 * meanwhile are lost: the caller catches up its own way (the worker polls, the api forgets its
 * cached keys).
 */
export class ChannelListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private retryDelayMs = 500;

  constructor(
    private readonly databaseUrl: string,
    private readonly channel: string,
    private readonly handlers: {
      onNotification: (payload: string) => void;
      onReconnected?: () => void;
      onError?: (error: Error) => void;
    },
  ) {}

  async start(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on('notification', (message) => this.handlers.onNotification(message.payload ?? ''));
    client.on('error', (error) => this.reconnectLater(client, error));
    client.on('end', () => this.reconnectLater(client, new Error(`LISTEN ${this.channel} connection ended`)));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
      // stop() ran while this connection was being made: it must not outlive the process's shutdown.
      if (this.stopped) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      this.retryDelayMs = 500;
      this.handlers.onReconnected?.();
    } catch (error) {
      this.reconnectLater(client, error as Error);
    }
  }

  async stop(): Promise<void> {
    // A connection still being made (a SIGTERM right after start-up) is ended by start() itself
    // once it is made: pg cannot abort a connect in progress without leaving it unsettled.
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
    this.handlers.onError?.(error);
    const delay = this.retryDelayMs;
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, 30_000);
    setTimeout(() => void this.start(), delay).unref();
  }
}
