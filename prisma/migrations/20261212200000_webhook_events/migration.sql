-- Decision 0276: the outbox records events that are not messages (membership, friendship, card
-- actions). A friendship belongs to no conversation, so its deliveries have none and queue per
-- webhook. The queues' index orders by COALESCE(conversation_id, 0) and COALESCE(pts, 0), exactly as
-- store/webhookDeliveries.ts#claimDeliveries compares them.

-- AlterTable
ALTER TABLE "webhook_deliveries" ALTER COLUMN "conversation_id" DROP NOT NULL;

-- DropIndex
DROP INDEX "webhook_deliveries_undelivered_idx";

-- CreateIndex
CREATE INDEX "webhook_deliveries_undelivered_idx" ON "webhook_deliveries"
  ("webhook_id", (COALESCE("conversation_id", 0)), (COALESCE("pts", 0)), "id")
  WHERE "status" <> 'DELIVERED';
