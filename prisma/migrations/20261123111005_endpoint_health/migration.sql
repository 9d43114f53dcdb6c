-- CreateEnum
CREATE TYPE "webhook_state" AS ENUM ('active', 'disabled');

-- AlterEnum
ALTER TYPE "delivery_status" ADD VALUE 'paused';

-- AlterTable
ALTER TABLE "webhooks" ADD COLUMN     "consecutive_failures" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "disabled_at" TIMESTAMPTZ(3),
ADD COLUMN     "disabled_reason" TEXT,
ADD COLUMN     "failing_since" TIMESTAMPTZ(3),
ADD COLUMN     "last_success_at" TIMESTAMPTZ(3),
ADD COLUMN     "state" "webhook_state" NOT NULL DEFAULT 'active',
ADD COLUMN     "throttle_per_second" INTEGER;
