import { Clock, CLOCK, HERALD_CONFIG, HeraldConfig } from '@herald/core';
import { ChannelListener, EVENT_TYPE_CHANNEL, EventTypeRecord, EventTypeRepository } from '@herald/database';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { compilePayloadSchema, PayloadValidator } from './payload-schema';

/** How long an event type's enforcement is trusted without asking the database again. */
const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  revision: number;
  /** Null: payloads of this type are not checked (no schema, or `enforce` is false). */
  validator: PayloadValidator | null;
  expiresAt: number;
}

/**
 * The validators of event types that enforce their schema, compiled once per revision, so a
 * publish costs a Map lookup and the validation itself. Invalidated the way ApiKeyCache is: a
 * change NOTIFYs `herald_event_types` with the type's name in the statement that makes it, and
 * every api process drops that entry (this process directly, which is all the embedded database
 * has); a dropped LISTEN connection forgets everything on reconnecting, and an entry lives at
 * most TTL_MS, which bounds a change written to the database by hand. An expired entry whose
 * revision has not moved keeps its compiled validator.
 */
@Injectable()
export class EventTypeSchemas implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(EventTypeSchemas.name);
  private readonly entries = new Map<string, Entry>();
  private readonly listener: ChannelListener | null;
  /** As in ApiKeyCache: a look-up answered while an eviction happened may predate the change, so it is not kept. */
  private evictions = 0;

  constructor(
    private readonly eventTypes: EventTypeRepository,
    @Inject(HERALD_CONFIG) config: HeraldConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.listener =
      config.database.embedded || !config.database.url
        ? null
        : new ChannelListener(config.database.url, EVENT_TYPE_CHANNEL, {
            onNotification: (name) => this.forget(name),
            onReconnected: () => this.forgetEverything(),
            onError: (error) => this.logger.warn(`LISTEN ${EVENT_TYPE_CHANNEL} lost, reconnecting: ${error.message}`),
          });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.listener?.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.listener?.stop();
  }

  /**
   * The validator payloads of `eventType` must pass, or null when they need none. An unknown
   * type is null and not remembered: publishing refuses it anyway, and remembering every name a
   * client tries would let the client fill the cache.
   */
  async enforcedValidator(eventType: string): Promise<PayloadValidator | null> {
    const now = this.clock.now().getTime();
    const cached = this.entries.get(eventType);
    if (cached && cached.expiresAt > now) return cached.validator;

    const evictionsBefore = this.evictions;
    const record = await this.eventTypes.find(eventType);
    if (!record) {
      this.entries.delete(eventType);
      return null;
    }
    const validator = cached && cached.revision === record.revision ? cached.validator : this.validatorOf(record);
    if (this.evictions === evictionsBefore) {
      if (!cached && this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(eventType, { revision: record.revision, validator, expiresAt: now + TTL_MS });
    }
    return validator;
  }

  /** Drops a changed event type's validator. */
  forget(eventType: string): void {
    this.evictions++;
    this.entries.delete(eventType);
  }

  private forgetEverything(): void {
    this.evictions++;
    this.entries.clear();
  }

  private validatorOf(record: EventTypeRecord): PayloadValidator | null {
    if (!record.enforce || record.schema === null) return null;
    const compiled = compilePayloadSchema(record.schema);
    if (compiled.ok) return compiled.validate;
    // Stored schemas were checked when they were saved; only a later, stricter Herald refuses one.
    // Refusing every publish of the type for Herald's own change would be an outage: it is not
    // enforced until an operator fixes it, and says so.
    this.logger.error(
      `the schema of event type "${record.name}" (revision ${record.revision}) no longer compiles, so it is not enforced: ` +
        compiled.problems.map((problem) => `${problem.pointer || '/'} ${problem.message}`).join('; '),
    );
    return null;
  }
}
