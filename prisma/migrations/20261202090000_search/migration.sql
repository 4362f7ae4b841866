-- Search documents (docs/search.md). Built in TypeScript (src/domain/searchText.ts), so rows that
-- existed before this migration get theirs from `npm run search:backfill`.

-- AlterTable
ALTER TABLE "users" ADD COLUMN     "search_document" tsvector NOT NULL DEFAULT ''::tsvector;

-- CreateTable
CREATE TABLE "message_search" (
    "conversation_id" BIGINT NOT NULL,
    "seq" BIGINT NOT NULL,
    "sent_at" TIMESTAMPTZ(3) NOT NULL,
    "document" tsvector NOT NULL,

    CONSTRAINT "message_search_pkey" PRIMARY KEY ("conversation_id","seq")
);

-- CreateIndex
CREATE INDEX "message_search_document_idx" ON "message_search" USING GIN ("document");

-- CreateIndex
CREATE INDEX "users_search_document_idx" ON "users" USING GIN ("search_document");

-- AddForeignKey
ALTER TABLE "message_search" ADD CONSTRAINT "message_search_conversation_id_seq_fkey" FOREIGN KEY ("conversation_id", "seq") REFERENCES "messages"("conversation_id", "seq") ON DELETE RESTRICT ON UPDATE CASCADE;

