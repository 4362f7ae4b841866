-- A claimed reminder is leased, not fired: fired_at is set only after its event was published, and a
-- claim whose instance died before that expires and is claimed again (issue 13, item 6).
ALTER TABLE "message_user_actions" ADD COLUMN "claimed_until" TIMESTAMPTZ(3);
