-- Issue 45: deactivation, takedowns, retention and legal hold.

-- Deactivated users: every token refused while set (their messages stay).
ALTER TABLE "users" ADD COLUMN "deactivated_at" TIMESTAMPTZ(3);

-- A takedown is stored as a recall by an operator, marked removed (status REMOVED in the API).
ALTER TABLE "messages" ADD COLUMN "removed" BOOLEAN NOT NULL DEFAULT false;

-- Retention (null = the server default), the oldest seq that may still exist, legal hold.
ALTER TABLE "conversations" ADD COLUMN "retention_seconds" INTEGER,
  ADD COLUMN "retained_from_seq" BIGINT NOT NULL DEFAULT 1,
  ADD COLUMN "legal_hold" BOOLEAN NOT NULL DEFAULT false;
