import { bootstrapKeyLabel, Clock, CLOCK, hashApiKey, HERALD_CONFIG, HeraldConfig } from '@herald/core';
import { ApiKeyRepository, BOOTSTRAP_ADMIN_KEY_ID } from '@herald/database';
import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';

/**
 * HERALD_ADMIN_KEY, when set, is a valid admin key: its hash is stored at start-up. When the
 * variable is changed or removed, the previous bootstrap key stops working.
 */
@Injectable()
export class BootstrapAdminKey implements OnApplicationBootstrap {
  constructor(
    private readonly apiKeys: ApiKeyRepository,
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const key = this.config.auth.adminKey;
    if (key) await this.apiKeys.upsertBootstrapAdmin(hashApiKey(key), bootstrapKeyLabel(key));
    else await this.apiKeys.revoke(BOOTSTRAP_ADMIN_KEY_ID, this.clock.now());
  }
}
