-- Issue 46: a draft keeps its mention ranges (UTF-16 units of draft_text, as TEXT content stores them).
ALTER TABLE "conversation_settings" ADD COLUMN "draft_mention_ranges" JSONB;
