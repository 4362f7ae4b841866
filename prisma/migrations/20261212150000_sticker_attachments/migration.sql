-- Issue 40: "add to stickers" from an uploaded image. The saved sticker keeps the attachment (whose
-- URLs are signed per viewer for minutes) instead of a url, and a STICKER message sent from it
-- carries the attachment, so its readers are granted the file like those of an IMAGE message.
-- Exactly one of url and attachment_id is set (store/stickers.ts StickerImage). Not a CHECK: Prisma's
-- schema describer panics on CHECK constraints, which would break migrate diff.
ALTER TABLE "saved_stickers" ALTER COLUMN "url" DROP NOT NULL,
  ADD COLUMN "attachment_id" BIGINT;

ALTER TABLE "saved_stickers" ADD CONSTRAINT "saved_stickers_attachment_id_fkey" FOREIGN KEY ("attachment_id") REFERENCES "attachments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE UNIQUE INDEX "saved_stickers_user_id_attachment_id_key" ON "saved_stickers"("user_id", "attachment_id");

CREATE INDEX "saved_stickers_attachment_id_idx" ON "saved_stickers"("attachment_id");

-- The attachments a message carries, now a sticker's too (see 20261211200000_attachments).
CREATE OR REPLACE FUNCTION parley_attachment_ids(k text, c jsonb) RETURNS SETOF bigint LANGUAGE sql IMMUTABLE AS $$
  WITH RECURSIVE node(kind, content) AS (
    SELECT k, c
    UNION ALL
    SELECT i.value ->> 'kind', i.value -> 'content'
    FROM node, jsonb_array_elements(CASE WHEN node.kind = 'FORWARD' THEN node.content -> 'items' ELSE '[]' END) i
  )
  SELECT DISTINCT (content #>> '{attachment,attachmentId}')::bigint FROM node
  WHERE kind IN ('IMAGE', 'AUDIO', 'VIDEO', 'FILE', 'STICKER') AND content #>> '{attachment,attachmentId}' IS NOT NULL
$$;

DROP TRIGGER messages_record_attachments ON "messages";

CREATE TRIGGER messages_record_attachments AFTER INSERT ON "messages"
  FOR EACH ROW WHEN (NEW.kind IN ('IMAGE', 'AUDIO', 'VIDEO', 'FILE', 'STICKER', 'FORWARD'))
  EXECUTE FUNCTION parley_record_message_attachments();
