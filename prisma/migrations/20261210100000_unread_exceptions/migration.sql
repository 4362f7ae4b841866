-- Issue 19, decision 0263: unread counts by exception. The messages after a reader's position are
-- numbered without gaps up to the conversation's last_seq, so a count is that difference less the
-- messages it leaves out, and those are found here instead of reading every unread message: the
-- messages that are not counted for anyone or only for some (SYSTEM, recalled, directed) or that a
-- mention count looks at, and each reader's deletions. IF NOT EXISTS: a large database may build them
-- CONCURRENTLY beforehand (docs/read-state.md "Upgrading"): each is small, a scan of the table builds it
-- (about 0.2 s a million messages on the benchmark machine).

-- CreateIndex
CREATE INDEX IF NOT EXISTS "messages_unread_exceptions_idx" ON "messages" ("conversation_id", "seq")
  WHERE "sender_type" = 'SYSTEM' OR "status" = 'RECALLED' OR cardinality("visible_to") > 0 OR "mention_all" OR cardinality("mention_user_ids") > 0;

-- CreateIndex
CREATE INDEX IF NOT EXISTS "message_user_actions_deleted_idx" ON "message_user_actions" ("user_id", "conversation_id", "seq")
  WHERE "action" = 'DELETE' AND "status" = 'ACTIVE';
