-- CreateEnum
CREATE TYPE "delivery_status" AS ENUM ('pending', 'sending', 'succeeded', 'failed', 'cancelled');

-- AlterTable
ALTER TABLE "webhooks" ADD COLUMN     "destination_host" TEXT NOT NULL DEFAULT '';

-- CreateTable
CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "application_id" INTEGER NOT NULL,
    "event_type" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "application_id" INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("application_id","key")
);

-- CreateTable
CREATE TABLE "deliveries" (
    "id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "application_id" INTEGER NOT NULL,
    "event_type" TEXT NOT NULL,
    "status" "delivery_status" NOT NULL,
    "ignores_subscription" BOOLEAN NOT NULL DEFAULT false,
    "manual_attempt" BOOLEAN NOT NULL DEFAULT false,
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3),
    "lease_token" TEXT,
    "lease_expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "delivery_attempts" (
    "id" TEXT NOT NULL,
    "delivery_id" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "response_status" INTEGER,
    "response_excerpt" TEXT,
    "error" TEXT,
    "next_attempt_at" TIMESTAMPTZ(3),

    CONSTRAINT "delivery_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "events_application_id_created_at_idx" ON "events"("application_id", "created_at");

-- CreateIndex
CREATE INDEX "deliveries_status_next_attempt_at_idx" ON "deliveries"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "deliveries_status_lease_expires_at_idx" ON "deliveries"("status", "lease_expires_at");

-- CreateIndex
CREATE INDEX "deliveries_application_id_id_idx" ON "deliveries"("application_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "delivery_attempts_delivery_id_number_key" ON "delivery_attempts"("delivery_id", "number");

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_application_id_fkey" FOREIGN KEY ("application_id") REFERENCES "applications"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_event_type_fkey" FOREIGN KEY ("event_type") REFERENCES "event_types"("name") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "deliveries"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Existing webhooks get their host from their URL.
UPDATE "webhooks" SET "destination_host" = lower(substring("url" from '^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^@/?#]*@)?(\[[^\]]*\]|[^/:?#]*)'));
