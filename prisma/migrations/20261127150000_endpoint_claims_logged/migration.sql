-- endpoint_claims is logged (issue 20: no table is UNLOGGED), with a row per claim instead of
-- one per claim and application.
--
-- Unlogged, a database crash emptied it, and for one lease period the attempts in flight before
-- the crash went uncounted against their endpoints' caps, and a standby had no rows at all.
-- Logged, a row and its index entry per claim and application were about 290 bytes of WAL (0.38
-- rows per delivered event with single publishes to twenty applications). A row per claim lists
-- its deliveries with their applications, and the slots it gave its worker per application. The
-- throttle's statement of the same claim (the same lease token) writes a row of its own.
-- bench/README.md, "Issue 20, fifth sitting", has the figures.
--
-- The rows of claims made before this migration are dropped: for at most one lease period, the
-- attempts they leased are not counted against their endpoints' caps.

-- DropTable
DROP TABLE "endpoint_claims";

-- CreateTable
CREATE TABLE "endpoint_claims" (
    "lease_token" TEXT NOT NULL,
    "throttled" BOOLEAN NOT NULL DEFAULT false,
    "holder" TEXT,
    "lease_until" TIMESTAMPTZ(3) NOT NULL,
    "application_ids" INTEGER[],
    "delivery_ids" TEXT[],
    "slot_applications" INTEGER[],
    "slots" INTEGER[],

    CONSTRAINT "endpoint_claims_pkey" PRIMARY KEY ("lease_token", "throttled")
);

-- CreateIndex
CREATE INDEX "endpoint_claims_lease_until_idx" ON "endpoint_claims"("lease_until");
