-- Endpoint caps count attempts in flight, not leases (PRODUCT.md 17, issue 23). A worker's claim
-- records how many of the endpoint's slots it holds (`slots`, as its process, `holder`): the
-- worker runs at most that many attempts at once for the endpoint, and may lease a few more
-- deliveries than that to start the moment an attempt ends, instead of after the finish commits
-- and another claim. A holder counts against the cap the least of its slots and its live leases,
-- so slots still end with the leases (finished, handed back, or run out with a killed worker).
-- Rows without a holder (the throttle's) count their live leases, as before.

-- AlterTable
ALTER TABLE "endpoint_claims" ADD COLUMN "holder" TEXT,
ADD COLUMN "slots" INTEGER;
