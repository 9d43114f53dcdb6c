import { Clock, CLOCK, hashApiKey, HERALD_CONFIG, HeraldConfig } from '@herald/core';
import { API_KEY_CHANNEL, ApiKeyRepository, ChannelListener } from '@herald/database';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Principal } from './principal';

/** How long a valid key is trusted without asking the database again. */
const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

/**
 * Valid keys by hash, so a request costs no query for authentication. A revocation evicts the
 * key at once: in this process directly, in every other api process through NOTIFY on
 * `herald_api_keys` (sent by the revoking statement). If the LISTEN connection drops, the
 * whole cache is forgotten on reconnecting; a revocation written to the database by hand is
 * honoured within the TTL.
 */
@Injectable()
export class ApiKeyCache implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ApiKeyCache.name);
  private readonly entries = new Map<string, { principal: Principal; expiresAt: number }>();
  private readonly listener: ChannelListener | null;

  constructor(
    private readonly apiKeys: ApiKeyRepository,
    @Inject(HERALD_CONFIG) config: HeraldConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    // On the embedded database NOTIFY does not cross connections; its single api process evicts directly.
    this.listener =
      config.database.embedded || !config.database.url
        ? null
        : new ChannelListener(config.database.url, API_KEY_CHANNEL, {
            onNotification: (keyId) => this.forget(keyId),
            onReconnected: () => this.entries.clear(),
            onError: (error) => this.logger.warn(`LISTEN ${API_KEY_CHANNEL} lost, reconnecting: ${error.message}`),
          });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.listener?.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.listener?.stop();
  }

  /** The principal a key stands for, or null when it is unknown or revoked. */
  async principalFor(key: string): Promise<Principal | null> {
    const hash = hashApiKey(key);
    const now = this.clock.now().getTime();
    const cached = this.entries.get(hash);
    if (cached && cached.expiresAt > now) return cached.principal;

    const record = await this.apiKeys.findUsableByHash(hash);
    if (!record) {
      this.entries.delete(hash);
      return null;
    }
    const principal: Principal = { keyId: record.id, scope: record.scope, accountId: record.accountId };
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(hash, { principal, expiresAt: now + TTL_MS });
    return principal;
  }

  forget(keyId: string): void {
    for (const [hash, entry] of this.entries) if (entry.principal.keyId === keyId) this.entries.delete(hash);
  }
}
