-- Delivery statistics (PRODUCT.md §16): the finish statement inserts one pending row per batch,
-- a worker folds pending rows into one row per application, UTC hour and event type every second,
-- and retention removes hours older than 400 days.
-- CreateTable
CREATE TABLE "delivery_stats" (
    "application_id" INTEGER NOT NULL,
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "event_type" TEXT NOT NULL,
    "events" INTEGER NOT NULL DEFAULT 0,
    "succeeded" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "failed_attempts" INTEGER NOT NULL DEFAULT 0,
    "latency_buckets" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "latency_counts" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "errors" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "delivery_stats_pkey" PRIMARY KEY ("application_id","hour","event_type")
);

-- CreateTable
CREATE TABLE "delivery_stats_pending" (
    "id" BIGSERIAL NOT NULL,
    "application_ids" INTEGER[],
    "hours" TIMESTAMPTZ(3)[],
    "event_types" TEXT[],
    "first_attempts" BOOLEAN[],
    "outcomes" TEXT[],
    "latency_buckets" INTEGER[],
    "error_kinds" TEXT[],

    CONSTRAINT "delivery_stats_pending_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "delivery_stats_hour_idx" ON "delivery_stats"("hour");
