import { headerFields } from '@herald/core';
import { WebhookConfigDto } from '@herald/contracts';
import { WebhookRecord } from '@herald/database';

export function toWebhookDto(webhook: WebhookRecord): WebhookConfigDto {
  const { retryPolicy: policy } = webhook;
  return {
    url: webhook.url,
    retry_enabled: webhook.retryEnabled,
    retry_config: {
      retry_value: policy.retryValue,
      max_retries: policy.maxRetries,
      backoff_type: policy.backoffType,
      backoff_value: policy.backoffValue,
    },
    headers: webhook.headers,
  };
}

/** A webhook as audit fields (PRODUCT.md §16): the api's field names, its headers one field each (their values are redacted). */
export function webhookAuditFields(webhook: WebhookRecord | null): Record<string, unknown> | null {
  if (webhook === null) return null;
  const { retryPolicy: policy } = webhook;
  return {
    url: webhook.url,
    retry_enabled: webhook.retryEnabled,
    'retry_config.retry_value': policy.retryValue,
    'retry_config.max_retries': policy.maxRetries,
    'retry_config.backoff_type': policy.backoffType,
    'retry_config.backoff_value': policy.backoffValue,
    ...headerFields(webhook.headers),
  };
}
