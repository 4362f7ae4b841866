-- Decision 0210: a batch of a sync difference starts its index range at the previous batch's last
-- change, so each sync index holds the sort key's columns after sync_xid (a difference written by one
-- transaction, one xid, is then still read about a batch at a time, not re-scanned from its start).

-- DropIndex
DROP INDEX "conversations_sync_xid_idx";

-- DropIndex
DROP INDEX "conversation_members_user_id_sync_xid_idx";

-- DropIndex
DROP INDEX "message_user_actions_user_id_sync_xid_idx";

-- CreateIndex
CREATE INDEX "conversations_sync_xid_id_idx" ON "conversations"("sync_xid", "id");

-- CreateIndex
CREATE INDEX "conversation_members_user_id_sync_xid_conversation_id_idx" ON "conversation_members"("user_id", "sync_xid", "conversation_id");

-- CreateIndex
CREATE INDEX "message_user_actions_user_id_sync_xid_conversation_id_seq_idx" ON "message_user_actions"("user_id", "sync_xid", "conversation_id", "seq");
