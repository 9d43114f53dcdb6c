import {
  Clock,
  CLOCK,
  DEFAULT_RETRY_POLICY,
  DestinationPolicy,
  generateWebhookSecret,
  ID_GENERATOR,
  IdGenerator,
  retrySchedule,
  ROTATED_SECRET_GRACE_SECONDS,
} from '@herald/core';
import { Errors, RetryScheduleDto, UpsertWebhookRequest, WebhookConfigDto } from '@herald/contracts';
import { ApplicationScope, DeliveryLogRepository, WebhookRecord, WebhookRepository } from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';
import { assertPublicDestination } from './destination-check';
import { toWebhookDto } from './webhook.mapper';

@Injectable()
export class WebhookService {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly deliveries: DeliveryLogRepository,
    private readonly destinations: DestinationPolicy,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  /** Creates or replaces the configuration; the first one also gets a signing secret. */
  async upsert(scope: ApplicationScope, request: UpsertWebhookRequest): Promise<WebhookConfigDto> {
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
    const saved = await this.webhooks.upsert(scope, webhook, { id: this.ids.next('sec'), secret: generateWebhookSecret() });
    return toWebhookDto(saved);
  }

  async get(scope: ApplicationScope): Promise<WebhookConfigDto> {
    return toWebhookDto(await this.require(scope, this.webhooks.find(scope)));
  }

  /** Removes the configuration with its subscriptions and secrets, and cancels what waits to be sent. */
  async delete(scope: ApplicationScope): Promise<WebhookConfigDto> {
    const removed = await this.require(scope, this.webhooks.delete(scope));
    await this.deliveries.cancelPending(scope, this.clock.now());
    return toWebhookDto(removed);
  }

  async retrySchedule(scope: ApplicationScope): Promise<RetryScheduleDto> {
    const webhook = await this.require(scope, this.webhooks.find(scope));
    const delays = retrySchedule(webhook.retryPolicy, webhook.retryEnabled === 1);
    return { delays_seconds: delays, total_seconds: delays.reduce((sum, delay) => sum + delay, 0) };
  }

  async secret(scope: ApplicationScope): Promise<string> {
    return this.require(scope, this.webhooks.currentSecret(scope));
  }

  async rotateSecret(scope: ApplicationScope): Promise<string> {
    const now = this.clock.now();
    const retiredUntil = new Date(now.getTime() + ROTATED_SECRET_GRACE_SECONDS * 1000);
    const next = { id: this.ids.next('sec'), secret: generateWebhookSecret() };
    return this.require(scope, this.webhooks.rotateSecret(scope, next, now, retiredUntil));
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
