import { Clock, CLOCK, DestinationPolicy, generateWebhookSecret, OPERATIONAL_EVENT_TYPES } from '@herald/core';
import { AppError, OperationalWebhookDto, UpsertOperationalWebhookRequest, WebhookSecretDto } from '@herald/contracts';
import { OperationalWebhookRecord, OperationalWebhookRepository } from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';
import { assertPublicDestination } from '../webhooks/destination-check';

@Injectable()
export class OperationalWebhookService {
  constructor(
    private readonly operational: OperationalWebhookRepository,
    private readonly destinations: DestinationPolicy,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Creates or replaces it; the first one gets a signing secret, which a replacement keeps. */
  async upsert(request: UpsertOperationalWebhookRequest): Promise<OperationalWebhookDto> {
    assertPublicDestination(this.destinations, request.url);
    const saved = await this.operational.upsert(
      { url: request.url, headers: request.headers ?? {} },
      generateWebhookSecret(),
      this.clock.now(),
    );
    return toDto(saved);
  }

  async get(): Promise<OperationalWebhookDto> {
    return toDto(required(await this.operational.find()));
  }

  /** Removes it; notices still waiting for it are cancelled. */
  async delete(): Promise<OperationalWebhookDto> {
    return toDto(required(await this.operational.delete(this.clock.now())));
  }

  async secret(): Promise<WebhookSecretDto> {
    return { secret: required(await this.operational.secret()) };
  }
}

function required<T>(value: T | null): T {
  if (value === null) {
    throw new AppError(
      'OPERATIONAL_WEBHOOK_NOT_CONFIGURED',
      'No operational webhook is configured; PUT /admin/operational_webhook sets one.',
    );
  }
  return value;
}

function toDto(record: OperationalWebhookRecord): OperationalWebhookDto {
  const headers = typeof record.headers === 'string' ? (JSON.parse(record.headers) as Record<string, string>) : record.headers;
  return {
    url: record.url,
    headers,
    events: [...OPERATIONAL_EVENT_TYPES],
    created_at: record.createdAt.toISOString(),
    updated_at: record.updatedAt.toISOString(),
  };
}
