-- Storage v2 (issue 20): events and deliveries keyed by (application_id, id). Each table had a
-- primary key on id and an index on (application_id, id) beside it: two index entries per
-- delivered event that no read needs once the key is the application's. Every statement knows
-- the application of the rows it names (the api is scoped by it, the queue entry carries it),
-- and the events list and the delivery log walk the key newest first. It is also the key a
-- split by application would use (ARCHITECTURE.md, "Past one PostgreSQL"). About 210 to 220
-- bytes of WAL less per delivered event (bench storage).

-- DropForeignKey
ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_event_id_fkey";

-- DropIndex
DROP INDEX "deliveries_application_id_id_idx";

-- DropIndex
DROP INDEX "events_application_id_id_idx";

-- AlterTable
ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_pkey",
ADD CONSTRAINT "deliveries_pkey" PRIMARY KEY ("application_id", "id");

-- AlterTable
ALTER TABLE "events" DROP CONSTRAINT "events_pkey",
ADD CONSTRAINT "events_pkey" PRIMARY KEY ("application_id", "id");

-- AddForeignKey
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_application_id_event_id_fkey" FOREIGN KEY ("application_id", "event_id") REFERENCES "events"("application_id", "id") ON DELETE RESTRICT ON UPDATE CASCADE;
