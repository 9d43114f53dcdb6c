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
