import {
  auditChanges,
  Clock,
  CLOCK,
  DestinationPolicy,
  generateWebhookSecret,
  headerFields,
  isHeaderField,
  OPERATIONAL_EVENT_TYPES,
} from '@herald/core';
import { AppError, OperationalWebhookDto, UpsertOperationalWebhookRequest, WebhookSecretDto } from '@herald/contracts';
import { OperationalWebhookRecord, OperationalWebhookRepository } from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';
import { AuditTrail } from '../common/audit/audit-trail';
import { Caller } from '../common/audit/caller';
import { assertPublicDestination } from '../webhooks/destination-check';

/** The operational webhook is the operator's: its records name no account or application. */
const NO_TARGET = { accountId: null, applicationId: null };

@Injectable()
export class OperationalWebhookService {
  constructor(
    private readonly operational: OperationalWebhookRepository,
    private readonly destinations: DestinationPolicy,
    private readonly audit: AuditTrail,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Creates or replaces it; the first one gets a signing secret, which a replacement keeps. Header values are not recorded. */
  async upsert(request: UpsertOperationalWebhookRequest, caller: Caller): Promise<OperationalWebhookDto> {
    assertPublicDestination(this.destinations, request.url);
    const saved = await this.operational.upsert(
      { url: request.url, headers: request.headers ?? {} },
      generateWebhookSecret(),
      this.clock.now(),
      ({ before, after }) =>
        this.audit.entry(
          caller,
          before ? 'operational_webhook.updated' : 'operational_webhook.created',
          NO_TARGET,
          auditChanges(auditFields(before), auditFields(after), isHeaderField),
        ),
    );
    return toDto(saved);
  }

  async get(): Promise<OperationalWebhookDto> {
    return toDto(required(await this.operational.find()));
  }

  /** Removes it; notices still waiting for it are cancelled. */
  async delete(caller: Caller): Promise<OperationalWebhookDto> {
    const removed = await this.operational.delete(this.clock.now(), (webhook) =>
      this.audit.entry(caller, 'operational_webhook.deleted', NO_TARGET, auditChanges(auditFields(webhook), null, isHeaderField)),
    );
    return toDto(required(removed));
  }

  /** Each read is recorded (`operational_webhook.secret_read`). */
  async secret(caller: Caller): Promise<WebhookSecretDto> {
    return {
      secret: required(await this.operational.revealSecret(this.audit.entry(caller, 'operational_webhook.secret_read', NO_TARGET))),
    };
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

function auditFields(record: OperationalWebhookRecord | null): Record<string, unknown> | null {
  if (record === null) return null;
  return { url: record.url, ...headerFields(toDto(record).headers) };
}
