import type { ApiKeyScope, DeliveryStatus, RetryPolicy } from '@herald/core';

export type { ApiKeyScope };

/** What repositories hand out: plain records, never Prisma's generated types. */

export interface AccountRecord {
  id: string;
  name: string;
}

export interface ApplicationRecord {
  id: number;
  accountId: string;
  name: string;
}

declare const ownershipChecked: unique symbol;

/**
 * Proof that the caller may act on an application. Only ApplicationRepository.scopeOf mints
 * it, and the api calls that only after the 404/403 checks, so a repository method that takes
 * a scope cannot be reached with an application the caller does not own.
 */
export interface ApplicationScope {
  readonly applicationId: number;
  readonly accountId: string;
  readonly [ownershipChecked]: true;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string | null;
  scope: ApiKeyScope;
  name: string;
  prefix: string;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface EventTypeRecord {
  name: string;
  description: string;
  /** A JSON Schema (draft 2020-12) of the payload, as the operator wrote it; null: none. */
  schema: Record<string, unknown> | null;
  /** Whether publishing refuses payloads that do not match `schema`. */
  enforce: boolean;
  example: Record<string, unknown> | null;
  /** Starts at 1 and grows with every change: what a compiled schema is cached under. */
  revision: number;
}

/** What an event type is made with; its revision starts at 1. */
export type NewEventTypeRecord = Omit<EventTypeRecord, 'revision'>;

export interface WebhookRecord {
  url: string;
  retryEnabled: 0 | 1;
  retryPolicy: RetryPolicy;
  headers: Record<string, string>;
}

export interface SubscriptionRecord {
  eventType: string;
  ensureDelivery: boolean;
  active: boolean;
}

export interface DeliveryRecord {
  id: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
  createdAt: Date;
}

/** A published event as stored, with the deliveries it made (oldest first). */
export interface StoredEventRecord {
  id: string;
  eventType: string;
  /** Compact JSON text, exactly what every attempt signs and sends. */
  payload: string;
  idempotencyKey: string | null;
  orderingKey: string | null;
  createdAt: Date;
  deliveryIds: string[];
}

/** One attempt as the delivery log keeps it. */
export interface DeliveryAttemptRecord {
  number: number;
  startedAt: Date;
  durationMs: number;
  /** The URL this attempt used. */
  url: string;
  responseStatus: number | null;
  responseExcerpt: string | null;
  error: string | null;
  nextAttemptAt: Date | null;
  /** The request's headers as sent, in order, signature included; null for attempts recorded before they were kept. */
  requestHeaders: Record<string, string> | null;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A page from `limit + 1` rows: the extra row only says there is a next page, whose cursor is the last item's key. */
export function pageOf<T>(rows: T[], limit: number, keyOf: (item: T) => string): Page<T> {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? keyOf(items[items.length - 1]) : null };
}
