-- Delivery statistics (PRODUCT.md §16): one row per application, UTC hour and event type,
-- upserted by the worker's finish statement and removed by retention after 400 days.
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

-- CreateIndex
CREATE INDEX "delivery_stats_hour_idx" ON "delivery_stats"("hour");
