-- The queue's indexes hold only unfinished deliveries (issue 20): the claim's due scan, lease expiry
-- and paused deliveries each get a partial index, so finished history is never in them and a
-- finish no longer writes entries into two full (status, …) indexes.

-- DropIndex
DROP INDEX "deliveries_status_lease_expires_at_idx";

-- DropIndex
DROP INDEX "deliveries_status_next_attempt_at_idx";

-- CreateIndex
CREATE INDEX "deliveries_due_idx" ON "deliveries"("next_attempt_at") WHERE (status = 'pending');

-- CreateIndex
CREATE INDEX "deliveries_leased_idx" ON "deliveries"("lease_expires_at") WHERE (status = 'sending');

-- CreateIndex
CREATE INDEX "deliveries_paused_idx" ON "deliveries"("application_id") WHERE (status = 'paused');
