import { Clock, HeraldConfig } from '@herald/core';
import { ChannelListener } from '@herald/database';
import { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';

/** What a look-up found in the database: its version, and how to build the cached value from it. */
export interface CacheSource<V> {
  /** Equal versions build equal values: an expired entry whose version has not moved keeps its value. */
  version: string | number;
  build: () => V;
}

interface Entry<V> {
  version: string | number;
  value: V;
  expiresAt: number;
}

/**
 * Values built from database rows once per version (a compiled schema, a compiled filter), so a
 * publish costs a Map lookup. Invalidated the way ApiKeyCache is: a change NOTIFYs `channel` with
 * the entry's key in the statement that makes it, and every api process drops that entry (this
 * process directly, which is all the embedded database has); a dropped LISTEN connection forgets
 * everything on reconnecting, and an entry lives at most `ttlMs`, which bounds a change written
 * to the database by hand.
 */
export interface NotifiedCacheOptions {
  channel: string;
  config: HeraldConfig;
  clock: Clock;
  logger: Logger;
  ttlMs: number;
  maxEntries: number;
}

export class NotifiedCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly listener: ChannelListener | null;
  /** As in ApiKeyCache: a look-up answered while an eviction happened may predate the change, so it is not kept. */
  private evictions = 0;

  constructor(private readonly options: NotifiedCacheOptions) {
    const { config, channel, logger } = options;
    this.listener =
      config.database.embedded || !config.database.url
        ? null
        : new ChannelListener(config.database.url, channel, {
            onNotification: (key) => this.forget(key),
            onReconnected: () => this.forgetEverything(),
            onError: (error) => logger.warn(`LISTEN ${channel} lost, reconnecting: ${error.message}`),
          });
  }

  async start(): Promise<void> {
    await this.listener?.start();
  }

  async stop(): Promise<void> {
    await this.listener?.stop();
  }

  /**
   * The value for `key`, from the cache or built from what `load` finds. `load` answering null
   * (nothing to build: an unknown name) answers null and is not remembered, so a client trying
   * names cannot fill the cache.
   */
  async get(key: string, load: () => Promise<CacheSource<V> | null>): Promise<V | null> {
    const now = this.options.clock.now().getTime();
    const cached = this.entries.get(key);
    if (cached && cached.expiresAt > now) return cached.value;

    const evictionsBefore = this.evictions;
    const source = await load();
    if (!source) {
      this.entries.delete(key);
      return null;
    }
    const value = cached && cached.version === source.version ? cached.value : source.build();
    if (this.evictions === evictionsBefore) {
      if (!cached && this.entries.size >= this.options.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(key, { version: source.version, value, expiresAt: now + this.options.ttlMs });
    }
    return value;
  }

  /** Drops a changed entry. */
  forget(key: string): void {
    this.evictions++;
    this.entries.delete(key);
  }

  forgetEverything(): void {
    this.evictions++;
    this.entries.clear();
  }
}

/**
 * A provider whose state is one NotifiedCache (the compiled schemas, the compiled filters): it
 * listens from the application's start to its shutdown.
 */
export abstract class NotifiedCacheProvider<V> implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly cache: NotifiedCache<V>;
  protected readonly logger = new Logger(this.constructor.name);

  protected constructor(options: Omit<NotifiedCacheOptions, 'logger'>) {
    this.cache = new NotifiedCache({ ...options, logger: this.logger });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.cache.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.cache.stop();
  }
}
