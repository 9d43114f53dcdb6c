import { checkFilter, Clock, CLOCK, FilterMatcher, HERALD_CONFIG, HeraldConfig } from '@herald/core';
import { ApplicationScope, SUBSCRIPTION_CHANNEL, SubscriptionRepository } from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';
import { NotifiedCacheProvider } from '../common/cache/notified-cache';

/** How long a subscription's filter is trusted without asking the database again. */
const TTL_MS = 60_000;
/** (application, event type) pairs remembered per process; most hold "no filter", a few bytes each. */
const MAX_ENTRIES = 50_000;

/** What a publish of an event type must pass for one application: a compiled filter, or none. */
type Compiled = { matches: FilterMatcher } | { matches: null };

/**
 * Each subscription's filter compiled once per version (its JSON text), so a publish costs a Map
 * lookup and the match itself (PRODUCT.md §14: evaluated in the api before the publish commits).
 * A trigger on `subscriptions` NOTIFYs `herald_subscriptions` with "<application>:<event type>"
 * whenever a filter is set or removed or a subscription comes or goes (a webhook's deletion
 * included), and every api process drops that entry within the NOTIFY's round trip (NotifiedCache).
 */
@Injectable()
export class SubscriptionFilters extends NotifiedCacheProvider<Compiled> {
  constructor(
    private readonly subscriptions: SubscriptionRepository,
    @Inject(HERALD_CONFIG) config: HeraldConfig,
    @Inject(CLOCK) clock: Clock,
  ) {
    super({ channel: SUBSCRIPTION_CHANNEL, config, clock, ttlMs: TTL_MS, maxEntries: MAX_ENTRIES });
  }

  /**
   * Whether the application's subscription to `eventType` lets `payload` through: true when it
   * has no filter (or there is no subscription, or no such event type: the publish statement
   * decides those).
   */
  async passes(scope: ApplicationScope, eventType: string, payload: unknown): Promise<boolean> {
    const compiled = await this.cache.get(keyOf(scope.applicationId, eventType), async () => {
      const found = await this.subscriptions.filterForPublishing(scope, eventType);
      if (found === 'unknown_event_type') return null;
      const filter = found.filter;
      return { version: filter === null ? '' : JSON.stringify(filter), build: () => this.compile(scope, eventType, filter) };
    });
    return !compiled?.matches || compiled.matches(payload);
  }

  /** Drops this process's entry at once (the trigger's NOTIFY reaches the others; the embedded database has only this one). */
  forget(scope: ApplicationScope, eventType: string): void {
    this.cache.forget(keyOf(scope.applicationId, eventType));
  }

  private compile(scope: ApplicationScope, eventType: string, filter: Record<string, unknown> | null): Compiled {
    if (filter === null) return { matches: null };
    const checked = checkFilter(filter);
    if (checked.ok) return { matches: checked.matches };
    // Stored filters were checked when they were saved; only a later, stricter Herald refuses one.
    // Delivering every event until someone saves it again loses nothing; dropping them would.
    this.logger.error(
      `the filter of application ${scope.applicationId}'s subscription to "${eventType}" no longer compiles, so it lets every event through: ` +
        checked.problems.map((problem) => `${problem.path || '(the filter)'} ${problem.message}`).join('; '),
    );
    return { matches: null };
  }
}

function keyOf(applicationId: number, eventType: string): string {
  return `${applicationId}:${eventType}`;
}
