-- Ordered delivery per key (PRODUCT.md 13). An event keeps its ordering key. A keyed delivery
-- takes its place in its key from one database-wide sequence as the publish is stored, and waits
-- (blocked, out of the claim index) until the deliveries before it in its key have left the queue.

-- AlterTable
ALTER TABLE "events" ADD COLUMN     "ordering_key" TEXT;

-- AlterTable
ALTER TABLE "delivery_queue" ADD COLUMN     "blocked" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "ordering_key" TEXT,
ADD COLUMN     "sequence" BIGINT;

-- The order of keyed deliveries: taken by the publish statement (event.repository.ts), never by a default.
CREATE SEQUENCE "delivery_queue_sequence_seq" AS BIGINT;

-- The claim index leaves out the deliveries waiting behind their key head.
DROP INDEX "delivery_queue_due_idx";
CREATE INDEX "delivery_queue_due_idx" ON "delivery_queue"("due_at") WHERE ((NOT paused) AND (NOT blocked));

-- CreateIndex
CREATE INDEX "delivery_queue_ordering_idx" ON "delivery_queue"("application_id", "ordering_key", "sequence") WHERE (ordering_key IS NOT NULL);
