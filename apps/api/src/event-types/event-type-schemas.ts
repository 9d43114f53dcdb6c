import { Clock, CLOCK, HERALD_CONFIG, HeraldConfig } from '@herald/core';
import { EVENT_TYPE_CHANNEL, EventTypeRecord, EventTypeRepository } from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';
import { NotifiedCacheProvider } from '../common/cache/notified-cache';
import { compilePayloadSchema, PayloadValidator } from './payload-schema';

/** How long an event type's enforcement is trusted without asking the database again. */
const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

/**
 * The validators of event types that enforce their schema (null: payloads of the type are not
 * checked), compiled once per revision, so a publish costs a Map lookup and the validation
 * itself. A change NOTIFYs `herald_event_types` with the type's name in the statement that makes
 * it, and every api process drops that entry (NotifiedCache).
 */
@Injectable()
export class EventTypeSchemas extends NotifiedCacheProvider<PayloadValidator | null> {
  constructor(
    private readonly eventTypes: EventTypeRepository,
    @Inject(HERALD_CONFIG) config: HeraldConfig,
    @Inject(CLOCK) clock: Clock,
  ) {
    super({ channel: EVENT_TYPE_CHANNEL, config, clock, ttlMs: TTL_MS, maxEntries: MAX_ENTRIES });
  }

  /**
   * The validator payloads of `eventType` must pass, or null when they need none. An unknown
   * type is null and not remembered: publishing refuses it anyway.
   */
  async enforcedValidator(eventType: string): Promise<PayloadValidator | null> {
    return this.cache.get(eventType, async () => {
      const record = await this.eventTypes.find(eventType);
      return record && { version: record.revision, build: () => this.validatorOf(record) };
    });
  }

  /** Drops a changed event type's validator. */
  forget(eventType: string): void {
    this.cache.forget(eventType);
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
