import {
  ADMIN_KEY_VARIABLE_ACTOR,
  AuditAction,
  auditChanges,
  bootstrapKeyLabel,
  Clock,
  CLOCK,
  hashApiKey,
  HERALD_CONFIG,
  HeraldConfig,
  ID_GENERATOR,
  IdGenerator,
} from '@herald/core';
import { ApiKeyRecord, ApiKeyRepository, AuditEntry, BOOTSTRAP_ADMIN_KEY_ID } from '@herald/database';
import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';

/**
 * HERALD_ADMIN_KEY, when set, is a valid admin key: its hash is stored at start-up. When the
 * variable is changed or removed, the previous bootstrap key stops working. Each such change is
 * an audit record whose actor is `system` (`HERALD_ADMIN_KEY`); a start-up that changes nothing
 * records nothing.
 */
@Injectable()
export class BootstrapAdminKey implements OnApplicationBootstrap {
  constructor(
    private readonly apiKeys: ApiKeyRepository,
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const key = this.config.auth.adminKey;
    if (key) {
      await this.apiKeys.upsertBootstrapAdmin(hashApiKey(key), bootstrapKeyLabel(key), ({ before, after }) =>
        this.record(before ? 'api_key.updated' : 'api_key.created', before, after),
      );
    } else {
      await this.apiKeys.revoke(BOOTSTRAP_ADMIN_KEY_ID, this.clock.now(), ({ before, after }) =>
        before.revokedAt === null ? this.record('api_key.revoked', before, after) : null,
      );
    }
  }

  private record(action: AuditAction, before: ApiKeyRecord | null, after: ApiKeyRecord): AuditEntry {
    const fields = (key: ApiKeyRecord | null) =>
      key && { id: key.id, name: key.name, prefix: key.prefix, scope: key.scope, revoked_at: key.revokedAt?.toISOString() ?? null };
    return {
      id: this.ids.next('aud'),
      at: this.clock.now(),
      actor: ADMIN_KEY_VARIABLE_ACTOR,
      action,
      accountId: null,
      applicationId: null,
      requestId: null,
      changes: auditChanges(fields(before), fields(after)),
    };
  }
}
