-- DropForeignKey
ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_event_id_fkey";

-- CreateIndex
CREATE INDEX "deliveries_updated_at_idx" ON "deliveries"("updated_at") WHERE (status IN ('succeeded', 'failed', 'cancelled'));

-- CreateIndex
CREATE INDEX "events_created_at_idx" ON "events"("created_at");

-- AddForeignKey
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
