/**
 * Where a delivery is: waiting (`pending`, also between retries), claimed by a worker
 * (`sending`), finished (`succeeded`, `failed`), or `cancelled` before it was sent. The
 * `delivery_status` enum in prisma/schema.prisma holds the same values (checked at build time
 * in packages/database).
 */
export const DELIVERY_STATUSES = ['pending', 'sending', 'succeeded', 'failed', 'cancelled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
