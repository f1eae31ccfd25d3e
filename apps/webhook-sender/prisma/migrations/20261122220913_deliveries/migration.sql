-- WebhookDelivery was never written before this migration (webhook-sender had no behaviour yet).
/*
  Warnings:

  - You are about to drop the column `payload` on the `WebhookDelivery` table. All the data in the column will be lost.
  - Added the required column `body` to the `WebhookDelivery` table without a default value. This is not possible if the table is not empty.
  - Added the required column `event` to the `WebhookDelivery` table without a default value. This is not possible if the table is not empty.
  - Added the required column `host` to the `WebhookDelivery` table without a default value. This is not possible if the table is not empty.

*/
-- DropIndex
DROP INDEX "WebhookDelivery_jobId_idx";

-- AlterTable
ALTER TABLE "WebhookDelivery" DROP COLUMN "payload",
ADD COLUMN     "body" TEXT NOT NULL,
ADD COLUMN     "claimedUntil" TIMESTAMP(3),
ADD COLUMN     "event" TEXT NOT NULL,
ADD COLUMN     "host" TEXT NOT NULL,
ADD COLUMN     "maxAttempts" INTEGER NOT NULL DEFAULT 3;

-- CreateIndex
CREATE INDEX "WebhookDelivery_ownerId_jobId_idx" ON "WebhookDelivery"("ownerId", "jobId");
