-- A webhook's configuration version (issue 21, item 3): workers keep each webhook's URL, retry
-- policy, headers and secrets by it, and the claim returns only the version. A new webhook takes
-- a number from the column's sequence (one for the whole table), and every change to one of those
-- takes the next (webhook.repository.ts), so a webhook removed and configured again never comes
-- back under a number a worker still holds. Existing webhooks get theirs as the column is added.

-- AlterTable
ALTER TABLE "webhooks" ADD COLUMN     "config_version" BIGSERIAL NOT NULL;
