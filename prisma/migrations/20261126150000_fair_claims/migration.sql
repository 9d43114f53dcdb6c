-- Isolation between applications (PRODUCT.md 17, issue 23). The claim walks the queue one
-- application at a time (a loose index scan of delivery_queue_ready_idx) instead of in one global
-- due order, so one application's backlog is never walked to reach another's work. Attempts in
-- flight per endpoint are capped across every worker: each claim records the deliveries it
-- leased per application in endpoint_claims, and a lease that ends (finished, handed back, or run
-- out with a killed worker) stops counting by itself.

-- CreateTable
CREATE TABLE "endpoint_claims" (
    "application_id" INTEGER NOT NULL,
    "lease_token" TEXT NOT NULL,
    "lease_until" TIMESTAMPTZ(3) NOT NULL,
    "delivery_ids" TEXT[],

    CONSTRAINT "endpoint_claims_pkey" PRIMARY KEY ("application_id","lease_token")
);

-- Unlogged: what a claim leased is only worth knowing while those leases last. A row costs no WAL
-- (about 200 bytes per delivered event when logged, bench storage), and after a database crash
-- the table starts empty: for at most one lease period, the leases held before it are not counted.
ALTER TABLE "endpoint_claims" SET UNLOGGED;

-- AlterTable
ALTER TABLE "webhooks" ADD COLUMN "max_in_flight" INTEGER;

-- DropIndex
DROP INDEX "delivery_queue_due_idx";

-- CreateIndex
CREATE INDEX "delivery_queue_ready_idx" ON "delivery_queue"("application_id", "due_at") WHERE ((NOT paused) AND (NOT blocked) AND (destination = 'webhook'));

-- CreateIndex
CREATE INDEX "delivery_queue_operational_idx" ON "delivery_queue"("due_at") WHERE (destination = 'operational');
