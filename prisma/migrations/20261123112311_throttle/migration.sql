-- AlterTable
ALTER TABLE "deliveries" ADD COLUMN     "throttle_slot_at" TIMESTAMPTZ(6);

-- CreateTable
CREATE TABLE "webhook_throttles" (
    "application_id" INTEGER NOT NULL,
    "next_slot_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "webhook_throttles_pkey" PRIMARY KEY ("application_id")
);

-- CreateIndex
CREATE INDEX "deliveries_throttle_slot_idx" ON "deliveries"("application_id") WHERE (throttle_slot_at IS NOT NULL);

-- AddForeignKey
ALTER TABLE "webhook_throttles" ADD CONSTRAINT "webhook_throttles_application_id_fkey" FOREIGN KEY ("application_id") REFERENCES "webhooks"("application_id") ON DELETE CASCADE ON UPDATE CASCADE;
