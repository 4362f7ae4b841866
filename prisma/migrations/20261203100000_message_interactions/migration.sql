-- Issue 16: pinned messages, reactions (rows and per-emoji aggregates), copies, saved stickers.

-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "forwarded_from" JSONB,
ADD COLUMN     "reactions_pts" BIGINT;

-- CreateTable
CREATE TABLE "pinned_messages" (
    "conversation_id" BIGINT NOT NULL,
    "seq" BIGINT NOT NULL,
    "pinned_by_id" BIGINT NOT NULL,
    "pinned_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "pinned_messages_pkey" PRIMARY KEY ("conversation_id","seq")
);

-- CreateTable
CREATE TABLE "message_reactions" (
    "conversation_id" BIGINT NOT NULL,
    "seq" BIGINT NOT NULL,
    "emoji" VARCHAR(64) NOT NULL,
    "user_id" BIGINT NOT NULL,
    "reacted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "message_reactions_pkey" PRIMARY KEY ("conversation_id","seq","emoji","user_id")
);

-- CreateTable
CREATE TABLE "message_reaction_groups" (
    "conversation_id" BIGINT NOT NULL,
    "seq" BIGINT NOT NULL,
    "emoji" VARCHAR(64) NOT NULL,
    "count" INTEGER NOT NULL,
    "first_reacted_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "message_reaction_groups_pkey" PRIMARY KEY ("conversation_id","seq","emoji")
);

-- CreateTable
CREATE TABLE "saved_stickers" (
    "id" BIGSERIAL NOT NULL,
    "user_id" BIGINT NOT NULL,
    "url" VARCHAR(2048) NOT NULL,
    "label" VARCHAR(100),
    "saved_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "saved_stickers_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "pinned_messages_conversation_id_pinned_at_idx" ON "pinned_messages"("conversation_id", "pinned_at");

-- CreateIndex
CREATE INDEX "message_reactions_conversation_id_seq_emoji_reacted_at_idx" ON "message_reactions"("conversation_id", "seq", "emoji", "reacted_at");

-- CreateIndex
CREATE INDEX "message_reactions_conversation_id_seq_user_id_idx" ON "message_reactions"("conversation_id", "seq", "user_id");

-- CreateIndex
CREATE INDEX "saved_stickers_user_id_id_idx" ON "saved_stickers"("user_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "saved_stickers_user_id_url_key" ON "saved_stickers"("user_id", "url");

-- AddForeignKey
ALTER TABLE "pinned_messages" ADD CONSTRAINT "pinned_messages_conversation_id_seq_fkey" FOREIGN KEY ("conversation_id", "seq") REFERENCES "messages"("conversation_id", "seq") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message_reactions" ADD CONSTRAINT "message_reactions_conversation_id_seq_fkey" FOREIGN KEY ("conversation_id", "seq") REFERENCES "messages"("conversation_id", "seq") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message_reaction_groups" ADD CONSTRAINT "message_reaction_groups_conversation_id_seq_fkey" FOREIGN KEY ("conversation_id", "seq") REFERENCES "messages"("conversation_id", "seq") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "saved_stickers" ADD CONSTRAINT "saved_stickers_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
