/**
 * Workers LISTEN here; a NOTIFY tells them a delivery is due now. Its payload is the id of the
 * transaction that committed the deliveries (`pg_current_xact_id()`, the publish statement's),
 * which a worker compares with the snapshot of its last claim (ClaimBatch.snapshot, the worker's
 * NewDeliveries); or empty, when the sender cannot name one (DeliveryNotifier, after its commit;
 * retries, resumes, replays): then every worker claims.
 */
export const DELIVERY_CHANNEL = 'herald_deliveries';
