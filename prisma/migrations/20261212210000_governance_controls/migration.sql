-- Issue 45: deactivation, takedowns, retention and legal hold.

-- Deactivated users: every token refused while set (their messages stay).
ALTER TABLE "users" ADD COLUMN "deactivated_at" TIMESTAMPTZ(3);

-- A takedown is stored as a recall by an operator, marked removed (status REMOVED in the API).
ALTER TABLE "messages" ADD COLUMN "removed" BOOLEAN NOT NULL DEFAULT false;

-- Retention (null = the server default), the oldest seq that may still exist, legal hold.
ALTER TABLE "conversations" ADD COLUMN "retention_seconds" INTEGER,
  ADD COLUMN "retained_from_seq" BIGINT NOT NULL DEFAULT 1,
  ADD COLUMN "legal_hold" BOOLEAN NOT NULL DEFAULT false;

-- The retention sweeper deletes by (conversation_id, seq) range, and the messages foreign key of
-- message_attachments is checked by it too. Recall and removal erase outbox snapshots by it.
CREATE INDEX "message_attachments_conversation_id_seq_idx" ON "message_attachments"("conversation_id", "seq");
CREATE INDEX "webhook_deliveries_conversation_id_seq_idx" ON "webhook_deliveries"("conversation_id", "seq");

-- Account sync also hears of a sweep (retained_from_seq), a new retention and a legal hold.
DROP TRIGGER "conversations_sync_xid" ON "conversations";
CREATE TRIGGER conversations_sync_xid BEFORE UPDATE ON "conversations"
  FOR EACH ROW WHEN (NEW.last_pts IS DISTINCT FROM OLD.last_pts
    OR NEW.retained_from_seq IS DISTINCT FROM OLD.retained_from_seq
    OR NEW.retention_seconds IS DISTINCT FROM OLD.retention_seconds
    OR NEW.legal_hold IS DISTINCT FROM OLD.legal_hold)
  EXECUTE FUNCTION parley_touch_sync_xid();
