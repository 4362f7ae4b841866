-- Issue 42: streamed replies and card buttons.

-- AlterEnum
ALTER TYPE "MessageStatus" ADD VALUE 'STREAMING';

-- A streamed message while it is being written: the last sequence stored with its text and when it was
-- last touched (the idle sweeper finishes those untouched for STREAM_IDLE_TIMEOUT_MS). Deleted when it ends.
CREATE TABLE "message_streams" (
    "conversation_id" BIGINT NOT NULL,
    "seq" BIGINT NOT NULL,
    "sender_id" BIGINT NOT NULL,
    "sequence" INTEGER NOT NULL DEFAULT 0,
    "touched_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "message_streams_pkey" PRIMARY KEY ("conversation_id","seq")
);

CREATE INDEX "message_streams_touched_at_idx" ON "message_streams"("touched_at");

ALTER TABLE "message_streams" ADD CONSTRAINT "message_streams_message_fkey" FOREIGN KEY ("conversation_id", "seq") REFERENCES "messages"("conversation_id", "seq") ON DELETE CASCADE ON UPDATE CASCADE;

-- One choice per user per card: the action pressed and the value sent with it.
CREATE TABLE "card_action_presses" (
    "conversation_id" BIGINT NOT NULL,
    "seq" BIGINT NOT NULL,
    "user_id" BIGINT NOT NULL,
    "action_id" VARCHAR(64) NOT NULL,
    "value" JSONB,
    "pressed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "card_action_presses_pkey" PRIMARY KEY ("conversation_id","seq","user_id")
);

ALTER TABLE "card_action_presses" ADD CONSTRAINT "card_action_presses_message_fkey" FOREIGN KEY ("conversation_id", "seq") REFERENCES "messages"("conversation_id", "seq") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "card_action_presses" ADD CONSTRAINT "card_action_presses_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- postSystemMessage is idempotent by clientMessageId per conversation: SYSTEM messages have no sender,
-- so messages_idempotency_key (NULLs distinct) cannot hold them to it.
CREATE UNIQUE INDEX "messages_system_idempotency_key" ON "messages"("conversation_id", "client_message_id") WHERE "sender_type" = 'SYSTEM' AND "client_message_id" IS NOT NULL;
