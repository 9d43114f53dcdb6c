/**
 * Where a delivery is: waiting (`pending`, also between retries), claimed by a worker
 * (`sending`), finished (`succeeded`, `failed`), `cancelled` before it was sent, or `paused`
 * while its webhook is disabled (sent once it is enabled again). The
 * `delivery_status` enum in prisma/schema.prisma holds the same values (checked at build time
 * in packages/database).
 */
export const DELIVERY_STATUSES = ['pending', 'sending', 'succeeded', 'failed', 'cancelled', 'paused'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** A webhook is sent to (`active`) or not (`disabled`, by hand or after failing too long). */
export const WEBHOOK_STATES = ['active', 'disabled'] as const;
export type WebhookState = (typeof WEBHOOK_STATES)[number];

/** Why a webhook is disabled. */
export const DISABLED_REASONS = ['failing', 'manual'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/** Where a delivery goes: the application's webhook, or the operator's operational webhook. */
export const DELIVERY_DESTINATIONS = ['webhook', 'operational'] as const;
export type DeliveryDestination = (typeof DELIVERY_DESTINATIONS)[number];
