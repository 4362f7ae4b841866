-- Issue 44, threads (docs/threads.md, decision 0282). A reply is a message of its conversation with
-- the seq of its root in thread_root_seq. in_conversation is false for a reply not sent
-- alsoInConversation: the history, the last message and the unread counts leave those out.

-- AlterTable
ALTER TABLE "messages" ADD COLUMN "thread_root_seq" BIGINT,
  ADD COLUMN "in_conversation" BOOLEAN NOT NULL DEFAULT true;

-- The conversation's own messages in seq order: the history page, messagesAround and the last
-- message scan it instead of the key, so replies cost them no row read (decision 0282).
CREATE INDEX "messages_in_conversation_idx" ON "messages" ("conversation_id", "seq") WHERE "in_conversation";

-- A thread's replies in seq order (Message.replies, the thread summaries).
CREATE INDEX "messages_thread_replies_idx" ON "messages" ("conversation_id", "thread_root_seq", "seq")
  WHERE "thread_root_seq" IS NOT NULL;

-- Unread counts by exception (decision 0263): a reply outside the conversation is never counted
-- there, so it joins the messages the partial index lists.
DROP INDEX IF EXISTS "messages_unread_exceptions_idx";
CREATE INDEX "messages_unread_exceptions_idx" ON "messages" ("conversation_id", "seq")
  WHERE "sender_type" = 'SYSTEM' OR "status" = 'RECALLED' OR cardinality("visible_to") > 0 OR "mention_all"
    OR cardinality("mention_user_ids") > 0 OR NOT "in_conversation";

-- One row per thread with a reply, moved by the statement that appends the reply.
CREATE TABLE "message_threads" (
  "conversation_id" BIGINT NOT NULL,
  "root_seq" BIGINT NOT NULL,
  "reply_count" INTEGER NOT NULL,
  "last_reply_seq" BIGINT NOT NULL,
  "last_reply_at" TIMESTAMPTZ(3) NOT NULL,
  CONSTRAINT "message_threads_pkey" PRIMARY KEY ("conversation_id", "root_seq"),
  CONSTRAINT "message_threads_root_fkey" FOREIGN KEY ("conversation_id", "root_seq") REFERENCES "messages"("conversation_id", "seq") ON DELETE CASCADE ON UPDATE CASCADE
);

-- A user's state of one thread: following (the root's sender, repliers, the mentioned, followThread)
-- and the read position. Rows of the sender and the mentioned only: a reply writes none per follower.
CREATE TABLE "thread_followers" (
  "conversation_id" BIGINT NOT NULL,
  "root_seq" BIGINT NOT NULL,
  "user_id" BIGINT NOT NULL,
  "following" BOOLEAN NOT NULL,
  "last_read_seq" BIGINT NOT NULL DEFAULT 0,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "sync_xid" xid8 NOT NULL DEFAULT pg_current_xact_id(),
  CONSTRAINT "thread_followers_pkey" PRIMARY KEY ("conversation_id", "root_seq", "user_id"),
  CONSTRAINT "thread_followers_root_fkey" FOREIGN KEY ("conversation_id", "root_seq") REFERENCES "messages"("conversation_id", "seq") ON DELETE CASCADE ON UPDATE CASCADE,
  CONSTRAINT "thread_followers_user_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- Viewer.threads: the user's followed threads.
CREATE INDEX "thread_followers_user_idx" ON "thread_followers" ("user_id", "conversation_id", "root_seq") WHERE "following";

-- Account sync: the user's thread states changed after a token.
CREATE INDEX "thread_followers_user_sync_idx" ON "thread_followers" ("user_id", "sync_xid", "conversation_id", "root_seq");

CREATE TRIGGER thread_followers_sync_xid BEFORE UPDATE ON "thread_followers"
  FOR EACH ROW WHEN (NEW.following IS DISTINCT FROM OLD.following OR NEW.last_read_seq IS DISTINCT FROM OLD.last_read_seq)
  EXECUTE FUNCTION parley_touch_sync_xid();
