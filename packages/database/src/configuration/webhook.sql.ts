import type { BackoffType } from '@herald/core';
import { WebhookRecord } from '../records';
import { prismaSelectOf, sqlColumnsOf } from '../table-columns';

/** A webhook as it is read from its table, by Prisma (WEBHOOK_SELECT) or in SQL (webhookColumns). */
export interface WebhookRow {
  url: string;
  retryEnabled: number;
  retryValue: number;
  maxRetries: number;
  backoffType: BackoffType;
  backoffValue: number;
  headers: unknown;
}

const WEBHOOK_COLUMNS = {
  url: 'url',
  retryEnabled: 'retry_enabled',
  retryValue: 'retry_value',
  maxRetries: 'max_retries',
  backoffType: 'backoff_type',
  backoffValue: 'backoff_value',
  headers: 'headers',
} as const satisfies Record<keyof WebhookRow, string>;

export const WEBHOOK_SELECT = prismaSelectOf(WEBHOOK_COLUMNS);

/** The columns of a WebhookRow; `table` is how the statement names the webhooks table. */
export function webhookColumns(table: string): string {
  return sqlColumnsOf(WEBHOOK_COLUMNS, table);
}

export function toWebhookRecord(row: WebhookRow): WebhookRecord {
  const headers = typeof row.headers === 'string' ? JSON.parse(row.headers) : row.headers;
  return {
    url: row.url,
    retryEnabled: Number(row.retryEnabled) === 1 ? 1 : 0,
    retryPolicy: {
      retryValue: Number(row.retryValue),
      maxRetries: Number(row.maxRetries),
      backoffType: row.backoffType,
      backoffValue: Number(row.backoffValue),
    },
    headers: (headers ?? {}) as Record<string, string>,
  };
}

/** The host the worker counts attempts in flight against (a webhook's, or the operational webhook's). */
export function destinationHost(url: string): string {
  return new URL(url).hostname.toLowerCase();
}
