-- The publish span's W3C trace context (traceparent, then tracestate after a space), written
-- only while the api exports traces, so that each delivery attempt joins the publish trace
-- whichever worker makes it and however long after. Nullable and without a default: adding it
-- rewrites no row.
-- AlterTable
ALTER TABLE "events" ADD COLUMN     "trace_context" TEXT;
