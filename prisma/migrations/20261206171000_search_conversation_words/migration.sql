-- Word lexemes per conversation (docs/search.md "How it works", decision 0070): each word lexeme of a
-- document again as '<conversation id>:<lexeme>', with its positions, in a GIN index of its own, so a
-- word query from a viewer in a few hundred conversations looks up only their conversations' entries
-- instead of fetching every match in all conversations. CJK characters and pairs (the ranges below,
-- the ones src/domain/searchText.ts CONVERSATION_WORD excludes) stay out: they are most of a
-- document's lexemes and their queries stay on message_search_document_idx. A plain SQL function (no
-- extension, no text search parser), so the index is kept by the same statements that write documents.
CREATE OR REPLACE FUNCTION "message_search_words"(conversation_id BIGINT, document tsvector) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (
  SELECT coalesce(string_agg(
    '''' || conversation_id || ':' || replace(replace(d.lexeme, '\', '\\'), '''', '''''') || '''' || coalesce(':' || array_to_string(d.positions, ','), ''),
    ' '), '')::tsvector
  FROM unnest(document) d
  WHERE d.lexeme !~ '[\u3041-\u3096\u30a1-\u30fa\u3400-\u4dbf\u4e00-\u9fff]');

-- CreateIndex (IF NOT EXISTS: a large database may build it CONCURRENTLY beforehand, docs/search.md "Upgrading")
CREATE INDEX IF NOT EXISTS "message_search_words_idx" ON "message_search" USING GIN ("message_search_words"("conversation_id", "document"));
