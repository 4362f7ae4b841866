-- Issue 14: each member's own state of a conversation (do-not-disturb, pin, archive, mark unread, draft),
-- in a row beside the membership that exists once the member sets something.
-- CreateTable
CREATE TABLE "conversation_settings" (
    "conversation_id" BIGINT NOT NULL,
    "user_id" BIGINT NOT NULL,
    "do_not_disturb_until" TIMESTAMPTZ(3),
    "pinned_at" TIMESTAMPTZ(3),
    "archived" BOOLEAN NOT NULL DEFAULT false,
    "marked_unread" BOOLEAN NOT NULL DEFAULT false,
    "draft_text" TEXT,
    "draft_quoted_seq" BIGINT,
    "draft_mention_ids" BIGINT[] DEFAULT ARRAY[]::BIGINT[],
    "draft_updated_at" TIMESTAMPTZ(3),

    CONSTRAINT "conversation_settings_pkey" PRIMARY KEY ("conversation_id","user_id")
);

-- CreateIndex
CREATE INDEX "conversation_settings_user_id_pinned_at_idx" ON "conversation_settings"("user_id", "pinned_at");

-- AddForeignKey
ALTER TABLE "conversation_settings" ADD CONSTRAINT "conversation_settings_conversation_id_user_id_fkey" FOREIGN KEY ("conversation_id", "user_id") REFERENCES "conversation_members"("conversation_id", "user_id") ON DELETE RESTRICT ON UPDATE CASCADE;

