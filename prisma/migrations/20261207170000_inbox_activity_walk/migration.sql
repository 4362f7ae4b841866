-- Issue 19, decision 0150: the inbox's unpinned part walks the newest conversations of the whole
-- database (a bounded range of this index) and, for archived lists, draws on the viewer's archived
-- settings rows.

-- CreateIndex
CREATE INDEX "conversations_last_activity_at_id_idx" ON "conversations"("last_activity_at", "id");

-- CreateIndex
CREATE INDEX "conversation_settings_user_id_archived_idx" ON "conversation_settings"("user_id", "archived");
