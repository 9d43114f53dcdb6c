import { AppError, Errors, quoteInput, SubscriptionMap, UpsertSubscriptionRequest } from '@herald/contracts';
import { auditChanges, Clock, CLOCK, EVENT_TYPE_NAME_PATTERN } from '@herald/core';
import {
  ApplicationScope,
  DeliveryLogRepository,
  EventTypeRepository,
  SubscriptionRecord,
  SubscriptionRepository,
  WebhookRepository,
} from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';
import { AuditTrail } from '../common/audit/audit-trail';
import { Caller } from '../common/audit/caller';

@Injectable()
export class SubscriptionService {
  constructor(
    private readonly subscriptions: SubscriptionRepository,
    private readonly webhooks: WebhookRepository,
    private readonly eventTypes: EventTypeRepository,
    private readonly deliveries: DeliveryLogRepository,
    private readonly audit: AuditTrail,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async list(scope: ApplicationScope): Promise<SubscriptionMap> {
    await this.requireWebhook(scope);
    return this.currentMap(scope);
  }

  /**
   * Creates the subscription (omitted flags: ensure_delivery false, active true) or changes the
   * flags given; recorded as `subscription.created` or `subscription.updated`.
   */
  async upsert(scope: ApplicationScope, eventType: string, request: UpsertSubscriptionRequest, caller: Caller): Promise<SubscriptionMap> {
    if (!EVENT_TYPE_NAME_PATTERN.test(eventType) || !(await this.eventTypes.exists(eventType))) {
      throw Errors.unknownEventType(eventType, 'subscription');
    }
    await this.requireWebhook(scope);
    const saved = await this.subscriptions.upsert(
      scope,
      eventType,
      { ensureDelivery: request.ensure_delivery, active: request.active },
      ({ before, after }) =>
        this.audit.entry(
          caller,
          before ? 'subscription.updated' : 'subscription.created',
          scope,
          auditChanges(subscriptionFields(before), subscriptionFields(after)),
        ),
    );
    // The webhook was deleted between the check above and the write.
    if (saved === 'no_webhook') throw Errors.webhookNotConfigured(scope.applicationId);
    return this.currentMap(scope);
  }

  /**
   * Removes the subscription, cancels the deliveries of that event still waiting to be sent,
   * and answers with the subscriptions that remain. (Deactivating cancels lazily instead: a
   * waiting delivery is cancelled when it comes due while the subscription is inactive.)
   */
  async delete(scope: ApplicationScope, eventType: string, caller: Caller): Promise<SubscriptionMap> {
    await this.requireWebhook(scope);
    const removed =
      EVENT_TYPE_NAME_PATTERN.test(eventType) &&
      (await this.subscriptions.delete(scope, eventType, (subscription) =>
        this.audit.entry(caller, 'subscription.deleted', scope, auditChanges(subscriptionFields(subscription), null)),
      ));
    if (!removed) {
      throw new AppError('SUBSCRIPTION_NOT_FOUND', `Application ${scope.applicationId} has no subscription to ${quoteInput(eventType)}.`);
    }
    await this.deliveries.cancelPending(scope, this.clock.now(), eventType);
    return this.currentMap(scope);
  }

  private async currentMap(scope: ApplicationScope): Promise<SubscriptionMap> {
    const rows = await this.subscriptions.list(scope);
    // fromEntries defines own properties, so an event named "__proto__" is just a key.
    return Object.fromEntries(rows.map((row) => [row.eventType, { ensure_delivery: row.ensureDelivery, active: row.active }]));
  }

  private async requireWebhook(scope: ApplicationScope): Promise<void> {
    if (!(await this.webhooks.exists(scope))) {
      throw Errors.webhookNotConfigured(scope.applicationId);
    }
  }
}

/**
 * A subscription as audit fields, named by its event (`acw_start.active`), so a record says which
 * one changed; its filter too when it had one (a deletion takes it along).
 */
function subscriptionFields(
  subscription: (SubscriptionRecord & { filter?: Record<string, unknown> | null }) | null,
): Record<string, unknown> | null {
  if (subscription === null) return null;
  const event = subscription.eventType;
  return Object.fromEntries([
    [`${event}.ensure_delivery`, subscription.ensureDelivery],
    [`${event}.active`, subscription.active],
    ...(subscription.filter ? [[`${event}.filter`, subscription.filter]] : []),
  ]);
}
