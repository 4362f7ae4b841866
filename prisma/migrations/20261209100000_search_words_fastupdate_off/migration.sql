-- The per-conversation words index without GIN's pending list (decision 0221). A search ORs its query
-- over each of the viewer's conversations: 100 to 200 prefix entries, and every search compares each of
-- them with every row still in the pending list. On the benchmark's fixture, 18 pending pages (about
-- 2,000 sends since the last vacuum) made the words lookup of "budget review" 28 ms instead of 4.4.
-- With fastupdate off each send writes its words into the index itself (only word lexemes: CJK
-- lexemes stay out of this index), and the rows already pending move in now.
ALTER INDEX "message_search_words_idx" SET (fastupdate = off);
SELECT gin_clean_pending_list('message_search_words_idx');
