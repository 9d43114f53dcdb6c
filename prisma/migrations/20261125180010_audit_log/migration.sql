-- CreateEnum
CREATE TYPE "audit_actor_type" AS ENUM ('admin_key', 'api_key', 'portal_link', 'system');

-- AlterTable
ALTER TABLE "webhooks" ADD COLUMN     "failing_warned_since" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "audit_log" (
    "id" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "actor_type" "audit_actor_type" NOT NULL,
    "actor_id" TEXT NOT NULL,
    "actor_prefix" TEXT,
    "action" TEXT NOT NULL,
    "account_id" TEXT,
    "application_id" INTEGER,
    "request_id" TEXT,
    "changes" JSON NOT NULL,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "audit_log_application_id_id_idx" ON "audit_log"("application_id", "id");

-- CreateIndex
CREATE INDEX "audit_log_account_id_id_idx" ON "audit_log"("account_id", "id");

-- CreateIndex
CREATE INDEX "audit_log_at_idx" ON "audit_log"("at");

-- Audit records are written and, by retention, removed, never changed (PRODUCT.md §16: no route
-- changes a record). Refused here too, whatever statement tries. The function body writes its
-- semicolons as \073 and these comments have none: the migration runner's driver splits scripts at
-- every semicolon, even inside a string.
CREATE FUNCTION "herald_audit_log_is_append_only"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  RAISE EXCEPTION ''audit records are never changed''\073
END
';

CREATE TRIGGER "audit_log_append_only"
BEFORE UPDATE ON "audit_log"
FOR EACH ROW EXECUTE FUNCTION "herald_audit_log_is_append_only"();

-- Warnings before disabling (PRODUCT.md §16), sent to the operational webhook like the others.
INSERT INTO "event_types" ("name", "description") VALUES
    ('webhook.failing', 'Operational: every attempt to an application''s webhook has failed for half of HERALD_DISABLE_AFTER_HOURS.'),
    ('webhook.recovered', 'Operational: a webhook that webhook.failing warned about succeeded again before it was disabled.')
ON CONFLICT ("name") DO NOTHING;
