-- Storage v2 (issue 20): the queue's full (application_id, due_at) index goes. Every publish
-- wrote an entry into it (about 80 to 100 bytes of WAL per delivered event, bench storage) for
-- statements that run when an operator or the health check acts on one application. Those
-- entries in the claim's walk are in delivery_queue_ready_idx already, and the rest (paused,
-- blocked behind a key's head, the operator's notices) go into this small partial index, written
-- only for rows out of the walk. A statement over all of an application's entries names both
-- predicates and PostgreSQL reads the two indexes as one BitmapOr.

-- DropIndex
DROP INDEX "delivery_queue_application_idx";

-- CreateIndex
CREATE INDEX "delivery_queue_parked_idx" ON "delivery_queue"("application_id") WHERE (paused OR blocked OR (destination <> 'webhook'::delivery_destination));
