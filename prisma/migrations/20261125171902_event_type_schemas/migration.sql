-- AlterTable
ALTER TABLE "event_types" ADD COLUMN     "enforce" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "example" JSON,
ADD COLUMN     "revision" INTEGER NOT NULL DEFAULT 1,
ADD COLUMN     "schema" JSON;
