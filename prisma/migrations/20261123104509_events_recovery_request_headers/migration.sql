-- DropIndex
DROP INDEX "events_application_id_created_at_idx";

-- AlterTable
ALTER TABLE "delivery_attempts" ADD COLUMN     "request_headers" JSON;

-- AlterTable
ALTER TABLE "events" ADD COLUMN     "idempotency_key" TEXT;

-- CreateIndex
CREATE INDEX "deliveries_event_id_idx" ON "deliveries"("event_id");

-- CreateIndex
CREATE INDEX "deliveries_application_id_created_at_id_idx" ON "deliveries"("application_id", "created_at", "id") WHERE (status = 'failed');

-- CreateIndex
CREATE INDEX "events_application_id_id_idx" ON "events"("application_id", "id");
