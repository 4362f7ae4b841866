-- Issue 40: files. An upload slot becomes an attachment, whose bytes live in the media store, not here.

-- CreateEnum
CREATE TYPE "AttachmentKind" AS ENUM ('IMAGE', 'AUDIO', 'VIDEO', 'FILE');

-- CreateTable
CREATE TABLE "attachments" (
    "id" BIGSERIAL NOT NULL,
    "uploader_id" BIGINT NOT NULL,
    "kind" "AttachmentKind" NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "size_bytes" BIGINT NOT NULL,
    "declared_mime" VARCHAR(255) NOT NULL,
    "mime_type" VARCHAR(255),
    "sha256" CHAR(64),
    "width" INTEGER,
    "height" INTEGER,
    "duration_ms" INTEGER,
    "has_thumbnail" BOOLEAN NOT NULL DEFAULT false,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "completed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "attachments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "message_attachments" (
    "attachment_id" BIGINT NOT NULL,
    "conversation_id" BIGINT NOT NULL,
    "seq" BIGINT NOT NULL,

    CONSTRAINT "message_attachments_pkey" PRIMARY KEY ("attachment_id","conversation_id","seq")
);

-- CreateIndex
CREATE INDEX "attachments_completed_at_idx" ON "attachments"("completed_at");

-- CreateIndex
CREATE INDEX "attachments_uploader_id_idx" ON "attachments"("uploader_id");

-- AddForeignKey
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_uploader_id_fkey" FOREIGN KEY ("uploader_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message_attachments" ADD CONSTRAINT "message_attachments_attachment_id_fkey" FOREIGN KEY ("attachment_id") REFERENCES "attachments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message_attachments" ADD CONSTRAINT "message_attachments_conversation_id_seq_fkey" FOREIGN KEY ("conversation_id", "seq") REFERENCES "messages"("conversation_id", "seq") ON DELETE RESTRICT ON UPDATE CASCADE;

-- The attachments a message carries: a media message its own (content.attachment, which the server
-- wrote), a merged forward those of its media items, nested forwards included. Only these places are
-- read: a card carries any JSON its sender likes, and must not grant access to anything.
CREATE FUNCTION parley_attachment_ids(k text, c jsonb) RETURNS SETOF bigint LANGUAGE sql IMMUTABLE AS $$
  WITH RECURSIVE node(kind, content) AS (
    SELECT k, c
    UNION ALL
    SELECT i.value ->> 'kind', i.value -> 'content'
    FROM node, jsonb_array_elements(CASE WHEN node.kind = 'FORWARD' THEN node.content -> 'items' ELSE '[]' END) i
  )
  SELECT DISTINCT (content #>> '{attachment,attachmentId}')::bigint FROM node
  WHERE kind IN ('IMAGE', 'AUDIO', 'VIDEO', 'FILE') AND content #>> '{attachment,attachmentId}' IS NOT NULL
$$;

-- Recorded when a message is stored, so the statement of the send path stays as it is and who may
-- read an attachment is an index lookup (store/attachments.ts). Media content is never edited (only
-- TEXT is), so INSERT is enough. The foreign key refuses a message naming an attachment the sweeper
-- removed meanwhile. (Semicolons in the body are written as \073: the migration runner splits
-- statements at every semicolon.)
CREATE FUNCTION parley_record_message_attachments() RETURNS trigger LANGUAGE plpgsql AS
  E'BEGIN INSERT INTO message_attachments (attachment_id, conversation_id, seq) SELECT id, NEW.conversation_id, NEW.seq FROM parley_attachment_ids(NEW.kind::text, NEW.content) id ON CONFLICT DO NOTHING\073 RETURN NULL\073 END';

CREATE TRIGGER messages_record_attachments AFTER INSERT ON "messages"
  FOR EACH ROW WHEN (NEW.kind IN ('IMAGE', 'AUDIO', 'VIDEO', 'FILE', 'FORWARD'))
  EXECUTE FUNCTION parley_record_message_attachments();
