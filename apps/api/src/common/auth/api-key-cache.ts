import { Clock, CLOCK, hashApiKey, HERALD_CONFIG, HeraldConfig } from '@herald/core';
import { API_KEY_CHANNEL, ApiKeyRepository, ChannelListener, PortalLinkRepository } from '@herald/database';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { looksLikePortalToken } from './portal-token';
import { Principal } from './principal';

/** How long a valid key is trusted without asking the database again (a portal token: never past its expiry). */
const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

/**
 * Valid keys and portal tokens by hash, so a request costs no query for authentication. A
 * revocation evicts the key or portal link at once: in this process directly, in every other api
 * process through NOTIFY on `herald_api_keys` (sent by the revoking statement, with the key's or
 * link's id). If the LISTEN connection drops, the whole cache is forgotten on reconnecting; a
 * revocation written to the database by hand is honoured within the TTL. A portal token is
 * cached no later than its expiry, so an expired one is refused without a query.
 */
@Injectable()
export class ApiKeyCache implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ApiKeyCache.name);
  private readonly entries = new Map<string, { principal: Principal; expiresAt: number }>();
  private readonly listener: ChannelListener | null;
  /**
   * Counts evictions. A lookup that was answered by the database while an eviction happened is
   * not cached: the answer may predate the revocation, and caching it would undo the eviction.
   */
  private evictions = 0;

  constructor(
    private readonly apiKeys: ApiKeyRepository,
    private readonly portalLinks: PortalLinkRepository,
    @Inject(HERALD_CONFIG) config: HeraldConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    // On the embedded database NOTIFY does not cross connections; its single api process evicts directly.
    this.listener =
      config.database.embedded || !config.database.url
        ? null
        : new ChannelListener(config.database.url, API_KEY_CHANNEL, {
            onNotification: (keyId) => this.forget(keyId),
            onReconnected: () => this.forgetEverything(),
            onError: (error) => this.logger.warn(`LISTEN ${API_KEY_CHANNEL} lost, reconnecting: ${error.message}`),
          });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.listener?.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.listener?.stop();
  }

  /** The principal a key or portal token stands for, or null when it is unknown, revoked or expired. */
  async principalFor(key: string): Promise<Principal | null> {
    const hash = hashApiKey(key);
    const now = this.clock.now();
    const cached = this.entries.get(hash);
    if (cached && cached.expiresAt > now.getTime()) return cached.principal;

    const evictionsBefore = this.evictions;
    const principal = await this.lookUp(key, hash, now);
    if (!principal) {
      this.entries.delete(hash);
      return null;
    }
    if (this.evictions === evictionsBefore) {
      const trustedUntil = now.getTime() + TTL_MS;
      const expiresAt = principal.scope === 'portal' ? Math.min(trustedUntil, principal.expiresAt.getTime()) : trustedUntil;
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(hash, { principal, expiresAt });
    }
    return principal;
  }

  /** Drops a revoked key's or portal link's principal. */
  forget(keyId: string): void {
    this.forgetAll([keyId]);
  }

  /** Drops revoked keys' or portal links' principals, in one pass over the cache. */
  forgetAll(keyIds: Iterable<string>): void {
    this.evictions++;
    const ids = new Set(keyIds);
    for (const [hash, entry] of this.entries) if (ids.has(entry.principal.keyId)) this.entries.delete(hash);
  }

  private forgetEverything(): void {
    this.evictions++;
    this.entries.clear();
  }

  private async lookUp(key: string, hash: string, now: Date): Promise<Principal | null> {
    if (looksLikePortalToken(key)) {
      const link = await this.portalLinks.findUsableByHash(hash, now);
      if (link) {
        return { keyId: link.id, scope: 'portal', accountId: link.accountId, applicationId: link.applicationId, expiresAt: link.expiresAt };
      }
      // Not a portal link: HERALD_ADMIN_KEY is the operator's choice and may happen to have this shape.
    }
    const record = await this.apiKeys.findUsableByHash(hash);
    return record ? { keyId: record.id, scope: record.scope, accountId: record.accountId, prefix: record.prefix } : null;
  }
}
