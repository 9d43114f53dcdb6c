import {
  auditChanges,
  Clock,
  CLOCK,
  DEFAULT_RETRY_POLICY,
  DestinationPolicy,
  generateWebhookSecret,
  ID_GENERATOR,
  IdGenerator,
  isHeaderField,
  retrySchedule,
  ROTATED_SECRET_GRACE_SECONDS,
} from '@herald/core';
import { AppError, Errors, RetryScheduleDto, UpsertWebhookRequest, WebhookConfigDto } from '@herald/contracts';
import { ApplicationScope, DeliveryLogRepository, WebhookRecord, WebhookRepository } from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';
import { AuditTrail } from '../common/audit/audit-trail';
import { Caller } from '../common/audit/caller';
import { assertPublicDestination } from './destination-check';
import { toWebhookDto, webhookAuditFields } from './webhook.mapper';

/**
 * A PUT is written only over the configuration its audit record calls `before`; another request
 * that changes it in between makes it read again. Past this many rounds the caller is told to retry.
 */
const UPSERT_ROUNDS = 10;

@Injectable()
export class WebhookService {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly deliveries: DeliveryLogRepository,
    private readonly destinations: DestinationPolicy,
    private readonly audit: AuditTrail,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  /**
   * Creates or replaces the configuration; the first one also gets a signing secret. Recorded as
   * `webhook.created` or `webhook.updated` with the fields that changed (header values redacted).
   */
  async upsert(scope: ApplicationScope, request: UpsertWebhookRequest, caller: Caller): Promise<WebhookConfigDto> {
    this.assertDestinationAllowed(request.url);
    const config = request.retry_config;
    const webhook: WebhookRecord = {
      url: request.url,
      retryEnabled: request.retry_enabled,
      retryPolicy: config
        ? {
            retryValue: config.retry_value,
            maxRetries: config.max_retries,
            backoffType: config.backoff_type,
            backoffValue: config.backoff_value ?? 0,
          }
        : { ...DEFAULT_RETRY_POLICY },
      headers: request.headers ?? {},
    };
    for (let round = 1; round <= UPSERT_ROUNDS; round++) {
      const before = await this.webhooks.find(scope);
      const record = this.audit.entry(
        caller,
        before ? 'webhook.updated' : 'webhook.created',
        scope,
        auditChanges(webhookAuditFields(before), webhookAuditFields(webhook), isHeaderField),
      );
      const saved = await this.webhooks.upsert(
        scope,
        webhook,
        before,
        { id: this.ids.next('sec'), secret: generateWebhookSecret() },
        record,
      );
      if (saved !== 'changed') return toWebhookDto(saved);
    }
    throw new AppError(
      'CONFLICT',
      `The webhook of application ${scope.applicationId} is being changed by other requests; send yours again.`,
    );
  }

  async get(scope: ApplicationScope): Promise<WebhookConfigDto> {
    return toWebhookDto(await this.require(scope, this.webhooks.find(scope)));
  }

  /** Removes the configuration with its subscriptions and secrets, and cancels what waits to be sent. */
  async delete(scope: ApplicationScope, caller: Caller): Promise<WebhookConfigDto> {
    const removed = await this.require(
      scope,
      this.webhooks.delete(scope, (webhook) =>
        this.audit.entry(caller, 'webhook.deleted', scope, auditChanges(webhookAuditFields(webhook), null, isHeaderField)),
      ),
    );
    await this.deliveries.cancelPending(scope, this.clock.now());
    return toWebhookDto(removed);
  }

  async retrySchedule(scope: ApplicationScope): Promise<RetryScheduleDto> {
    const webhook = await this.require(scope, this.webhooks.find(scope));
    const delays = retrySchedule(webhook.retryPolicy, webhook.retryEnabled === 1);
    return { delays_seconds: delays, total_seconds: delays.reduce((sum, delay) => sum + delay, 0) };
  }

  /** Reading the secret is recorded (`webhook.secret_read`): it is how a receiver's trust is handed out. */
  async secret(scope: ApplicationScope, caller: Caller): Promise<string> {
    return this.require(scope, this.webhooks.revealSecret(scope, this.audit.entry(caller, 'webhook.secret_read', scope)));
  }

  /** Recorded with the new secret's id and when the old one stops signing; never a secret. */
  async rotateSecret(scope: ApplicationScope, caller: Caller): Promise<string> {
    const now = this.clock.now();
    const retiredUntil = new Date(now.getTime() + ROTATED_SECRET_GRACE_SECONDS * 1000);
    const next = { id: this.ids.next('sec'), secret: generateWebhookSecret() };
    const record = this.audit.entry(caller, 'webhook.secret_rotated', scope, {
      secret_id: [null, next.id],
      previous_secret_expires_at: [null, retiredUntil.toISOString()],
    });
    return this.require(scope, this.webhooks.rotateSecret(scope, next, now, retiredUntil, record));
  }

  /**
   * An IP-literal host is judged now; a host name is judged at every connection instead,
   * because what it resolves to can change.
   */
  private assertDestinationAllowed(url: string): void {
    assertPublicDestination(this.destinations, url);
  }

  private async require<T>(scope: ApplicationScope, pending: Promise<T | null>): Promise<T> {
    const value = await pending;
    if (value === null) {
      throw Errors.webhookNotConfigured(scope.applicationId);
    }
    return value;
  }
}
