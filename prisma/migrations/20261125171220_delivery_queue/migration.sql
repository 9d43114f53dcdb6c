-- Storage v2 (issue 20): the queue apart from the history. Unfinished deliveries get a row in the
-- narrow delivery_queue (due time, lease, throttle slot, paused), deliveries keeps what became
-- of each one, with no index on a column an attempt changes, so the update at the finish is HOT.
-- sending is no longer stored: it is a pending delivery whose queue row holds a live lease.

-- CreateTable
CREATE TABLE "delivery_queue" (
    "delivery_id" TEXT NOT NULL,
    "application_id" INTEGER NOT NULL,
    "destination" "delivery_destination" NOT NULL DEFAULT 'webhook',
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    "lease_token" TEXT,
    "lease_until" TIMESTAMPTZ(3),
    "throttle_slot_at" TIMESTAMPTZ(6),
    "slot_reserved_at" TIMESTAMPTZ(3),
    "paused" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "delivery_queue_pkey" PRIMARY KEY ("delivery_id")
);

-- The unfinished deliveries move in, leases and throttle slots with them.
INSERT INTO "delivery_queue" ("delivery_id", "application_id", "destination", "due_at", "lease_token", "lease_until",
                              "throttle_slot_at", "slot_reserved_at", "paused")
SELECT "id", "application_id", "destination", COALESCE("next_attempt_at", "created_at"),
       CASE WHEN "status" = 'sending' THEN "lease_token" END,
       CASE WHEN "status" = 'sending' THEN "lease_expires_at" END,
       "throttle_slot_at", CASE WHEN "throttle_slot_at" IS NOT NULL THEN "updated_at" END, "status" = 'paused'
  FROM "deliveries"
 WHERE "status" IN ('pending', 'sending', 'paused');

UPDATE "deliveries" SET "status" = 'pending' WHERE "status" = 'sending';

-- CreateIndex
CREATE INDEX "delivery_queue_due_idx" ON "delivery_queue"("due_at") WHERE (NOT paused);

-- CreateIndex
CREATE INDEX "delivery_queue_application_idx" ON "delivery_queue"("application_id", "due_at");

-- CreateIndex
CREATE INDEX "delivery_queue_throttle_slot_idx" ON "delivery_queue"("application_id") WHERE (throttle_slot_at IS NOT NULL);

-- DropForeignKey
ALTER TABLE "delivery_attempts" DROP CONSTRAINT "delivery_attempts_delivery_id_fkey";

-- DropIndex
DROP INDEX "deliveries_application_id_created_at_id_idx";

-- DropIndex
DROP INDEX "deliveries_due_idx";

-- DropIndex
DROP INDEX "deliveries_leased_idx";

-- DropIndex
DROP INDEX "deliveries_paused_idx";

-- DropIndex
DROP INDEX "deliveries_throttle_slot_idx";

-- DropIndex
DROP INDEX "deliveries_updated_at_idx";

-- AlterTable
ALTER TABLE "deliveries" DROP COLUMN "lease_expires_at",
DROP COLUMN "lease_token",
DROP COLUMN "throttle_slot_at";

-- Room on each page for the next version of a row, so the update at the finish stays on its page (HOT):
-- a delivery is inserted once and updated about once. The rows of the queue are updated at each claim
-- and deleted at the finish, and the table stays small.
ALTER TABLE "deliveries" SET (fillfactor = 80);
ALTER TABLE "delivery_queue" SET (fillfactor = 50);
