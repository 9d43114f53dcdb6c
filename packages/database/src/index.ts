// @herald/database, split by concern (ARCHITECTURE.md, "Data access"): configuration/ goes through
// Prisma's model API; events/, queue/ and housekeeping/ through typed SQL on the pg pool.
export * from './database-errors';
export * from './database.module';
export * from './migrations/migration-files';
export * from './migrations/migration-runner';
export * from './notifications/channel-listener';
export * from './notifications/delivery-channel';
export * from './notifications/delivery-notifier';
export * from './pg-pool';
export * from './prisma.service';
export * from './records';

export * from './audit/audit.sql';
export * from './audit/audit-log.repository';

export * from './configuration/account.repository';
export * from './configuration/api-key.repository';
export * from './configuration/application.repository';
export * from './configuration/event-type.repository';
export * from './configuration/portal-link.repository';
export * from './configuration/subscription.repository';
export * from './configuration/webhook.repository';

export * from './events/delivery-log.repository';
export * from './events/event.repository';
export * from './events/event-log.repository';
export * from './events/operational-webhook.repository';

export * from './queue/delivery-queue.repository';
export * from './queue/webhook-health.repository';
export * from './queue/webhook-throttle.repository';
export { THROTTLE_HORIZON_MS, THROTTLE_LATE_MS, THROTTLE_SPACING } from './queue/throttle.sql';

export * from './housekeeping/health.repository';

export * from './statistics/statistics-fold.repository';
export * from './statistics/statistics.repository';
