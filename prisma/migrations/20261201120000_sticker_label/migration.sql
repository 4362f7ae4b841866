-- Contract v2 renames StickerContent.name to label (it clashed with FileContent.name in one selection).
-- Stored sticker content, and sticker items inside merged forwards, move the key along.
UPDATE "messages"
SET "content" = ("content" - 'name') || jsonb_build_object('label', "content" -> 'name')
WHERE "kind" = 'STICKER' AND "content" ? 'name';

UPDATE "messages" m
SET "content" = jsonb_set(m."content", '{items}', (
  SELECT jsonb_agg(
    CASE WHEN item ->> 'kind' = 'STICKER' AND item -> 'content' ? 'name'
      THEN jsonb_set(item, '{content}', ((item -> 'content') - 'name') || jsonb_build_object('label', item -> 'content' -> 'name'))
      ELSE item END
    ORDER BY position)
  FROM jsonb_array_elements(m."content" -> 'items') WITH ORDINALITY AS items(item, position)))
WHERE m."kind" = 'FORWARD'
  AND EXISTS (SELECT 1 FROM jsonb_array_elements(m."content" -> 'items') AS i(item) WHERE item ->> 'kind' = 'STICKER' AND item -> 'content' ? 'name');
