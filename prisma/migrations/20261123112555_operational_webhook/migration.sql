-- CreateEnum
CREATE TYPE "delivery_destination" AS ENUM ('webhook', 'operational');

-- AlterTable
ALTER TABLE "deliveries" ADD COLUMN     "destination" "delivery_destination" NOT NULL DEFAULT 'webhook';

-- CreateTable
CREATE TABLE "operational_webhook" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "url" TEXT NOT NULL,
    "destination_host" TEXT NOT NULL,
    "headers" JSON NOT NULL,
    "secret" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "operational_webhook_pkey" PRIMARY KEY ("id")
);

-- The events Herald sends to the operational webhook (PRODUCT.md §10). In the catalogue because
-- every event names its type, and the api keeps them out of customers' hands (not listed, not
-- publishable, not subscribable). No semicolon in these comments: the schema engine splits on them.
INSERT INTO "event_types" ("name", "description") VALUES
    ('webhook.disabled', 'Operational: an application''s webhook was disabled (by hand, or after failing for HERALD_DISABLE_AFTER_HOURS).'),
    ('webhook.enabled', 'Operational: an application''s webhook was enabled again.'),
    ('delivery.exhausted', 'Operational: a delivery failed for good, its retry schedule spent.')
ON CONFLICT ("name") DO NOTHING;
