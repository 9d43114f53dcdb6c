import {
  AppError,
  ErrorDetail,
  Errors,
  FILTER_TEST_LIMIT,
  FILTER_TEST_MAX_MATCHED_IDS,
  quoteInput,
  SubscriptionFilterDto,
  SubscriptionFilterTestDto,
  TestSubscriptionFilterRequest,
} from '@herald/contracts';
import { AuditAction, auditChanges, checkFilter, EVENT_TYPE_NAME_PATTERN, FilterMatcher, FilterProblem } from '@herald/core';
import { ApplicationScope, EventLogRepository, SubscriptionRepository, WebhookRepository } from '@herald/database';
import { Injectable } from '@nestjs/common';
import { AuditTrail } from '../common/audit/audit-trail';
import { Caller } from '../common/audit/caller';
import { SubscriptionFilters } from './subscription-filters';

/** Events read per statement by the test route: one page of payloads (up to 256 KiB each) in memory at a time. */
const TEST_PAGE_SIZE = 50;

/** PRODUCT.md §14: a subscription's payload filter, read, set, removed and tried on the latest events. */
@Injectable()
export class SubscriptionFilterService {
  constructor(
    private readonly subscriptions: SubscriptionRepository,
    private readonly webhooks: WebhookRepository,
    private readonly eventLog: EventLogRepository,
    private readonly filters: SubscriptionFilters,
    private readonly audit: AuditTrail,
  ) {}

  async get(scope: ApplicationScope, eventType: string): Promise<SubscriptionFilterDto> {
    return { event: eventType, filter: await this.storedFilter(scope, eventType) };
  }

  /** Stores the filter, checked against every bound of §14 first (400-02 naming each place); recorded as `subscription.filter_updated`. */
  async set(scope: ApplicationScope, eventType: string, filter: Record<string, unknown>, caller: Caller): Promise<SubscriptionFilterDto> {
    // An unknown subscription is 404-03 whatever the body.
    await this.storedFilter(scope, eventType);
    compileOrThrow(filter, 'filter');
    await this.write(scope, eventType, filter, caller, 'subscription.filter_updated');
    return { event: eventType, filter };
  }

  /** Recorded as `subscription.filter_deleted` (with no changes when there was none). */
  async remove(scope: ApplicationScope, eventType: string, caller: Caller): Promise<SubscriptionFilterDto> {
    await this.requireWebhook(scope);
    await this.write(scope, eventType, null, caller, 'subscription.filter_deleted');
    return { event: eventType, filter: null };
  }

  /**
   * Tries `request.filter` (or the stored one; none stored matches every event) on the
   * application's latest `limit` events of the type, newest first.
   */
  async test(scope: ApplicationScope, eventType: string, request: TestSubscriptionFilterRequest): Promise<SubscriptionFilterTestDto> {
    const stored = await this.storedFilter(scope, eventType);
    const filter = request.filter ?? stored;
    const matches: FilterMatcher = filter === null ? () => true : compileOrThrow(filter, 'filter');
    const limit = request.limit ?? FILTER_TEST_LIMIT.default;

    let tested = 0;
    let matched = 0;
    const matchedIds: string[] = [];
    let before: string | null = null;
    while (tested < limit) {
      const page = await this.eventLog.payloadsOf(scope, eventType, Math.min(TEST_PAGE_SIZE, limit - tested), before);
      for (const event of page) {
        if (matches(JSON.parse(event.payload))) {
          matched++;
          if (matchedIds.length < FILTER_TEST_MAX_MATCHED_IDS) matchedIds.push(event.id);
        }
      }
      tested += page.length;
      if (page.length < TEST_PAGE_SIZE) break;
      before = page[page.length - 1].id;
    }
    return { tested, matched, matched_ids: matchedIds };
  }

  /** The stored filter (null: none); 404-02 without a webhook, 404-03 without the subscription. */
  private async storedFilter(scope: ApplicationScope, eventType: string): Promise<Record<string, unknown> | null> {
    await this.requireWebhook(scope);
    const found = EVENT_TYPE_NAME_PATTERN.test(eventType) ? await this.subscriptions.findFilter(scope, eventType) : null;
    if (!found) throw subscriptionNotFound(scope, eventType);
    return found.filter;
  }

  private async write(
    scope: ApplicationScope,
    eventType: string,
    filter: Record<string, unknown> | null,
    caller: Caller,
    action: AuditAction,
  ): Promise<void> {
    // Named by the subscription's event (`acw_start.filter`), as its other records are.
    const field = `${eventType}.filter`;
    const saved =
      EVENT_TYPE_NAME_PATTERN.test(eventType) &&
      (await this.subscriptions.setFilter(scope, eventType, filter, ({ before }) =>
        this.audit.entry(caller, action, scope, auditChanges(Object.fromEntries([[field, before]]), Object.fromEntries([[field, filter]]))),
      ));
    if (!saved) throw subscriptionNotFound(scope, eventType);
    this.filters.forget(scope, eventType);
  }

  private async requireWebhook(scope: ApplicationScope): Promise<void> {
    if (!(await this.webhooks.exists(scope))) throw Errors.webhookNotConfigured(scope.applicationId);
  }
}

/** The filter compiled, or 400-02 whose details name each problem's place under `root` (`filter.$or[1].queue.id.$gt`). */
function compileOrThrow(filter: unknown, root: string): FilterMatcher {
  const checked = checkFilter(filter);
  if (checked.ok) return checked.matches;
  const details: ErrorDetail[] = checked.problems.map((problem) => ({ field: placeOf(root, problem), message: problem.message }));
  throw new AppError('VALIDATION_FAILED', `${details[0].field} ${details[0].message}`, { details });
}

function placeOf(root: string, problem: FilterProblem): string {
  return problem.path === '' ? root : `${root}.${problem.path}`;
}

function subscriptionNotFound(scope: ApplicationScope, eventType: string): AppError {
  return new AppError('SUBSCRIPTION_NOT_FOUND', `Application ${scope.applicationId} has no subscription to ${quoteInput(eventType)}.`);
}
