-- Account-level sync (decision 0080, docs/sync.md). Each row a sync reads carries the id of the
-- transaction that last changed it as the viewer sees it (xid8, never wraps), so a token can be a
-- database snapshot: "changed after the token" = written by a transaction the token's snapshot
-- does not see, whatever order the transactions took their numbers in.

-- AlterTable
ALTER TABLE "conversations" ADD COLUMN     "sync_xid" xid8 NOT NULL DEFAULT pg_current_xact_id();

-- AlterTable
ALTER TABLE "conversation_members" ADD COLUMN     "sync_xid" xid8 NOT NULL DEFAULT pg_current_xact_id();

-- AlterTable
ALTER TABLE "message_user_actions" ADD COLUMN     "sync_xid" xid8 NOT NULL DEFAULT pg_current_xact_id();

-- CreateIndex
CREATE INDEX "conversations_sync_xid_idx" ON "conversations"("sync_xid");

-- CreateIndex
CREATE INDEX "conversation_members_user_id_sync_xid_idx" ON "conversation_members"("user_id", "sync_xid");

-- CreateIndex
CREATE INDEX "message_user_actions_user_id_sync_xid_idx" ON "message_user_actions"("user_id", "sync_xid");

-- A conversation changes for its members exactly when its pts moves: sends, edits, recalls, and
-- everything written as a SYSTEM message (title, members, roles, pins) or taking a pts later
-- (reactions). The trigger derives that from last_pts, so no code path can forget it.
-- The body spells its semicolons \073: Prisma's migration runner splits scripts at every semicolon.
CREATE FUNCTION parley_touch_sync_xid() RETURNS trigger LANGUAGE plpgsql AS
  E'BEGIN NEW.sync_xid := pg_current_xact_id()\073 RETURN NEW\073 END';

CREATE TRIGGER conversations_sync_xid BEFORE UPDATE ON "conversations"
  FOR EACH ROW WHEN (NEW.last_pts IS DISTINCT FROM OLD.last_pts) EXECUTE FUNCTION parley_touch_sync_xid();

-- The viewer's own row: join, leave, read position, role, mute (and later settings and drafts).
-- An UPDATE that changes nothing keeps the old xid, so a no-op write syncs nothing.
CREATE TRIGGER conversation_members_sync_xid BEFORE UPDATE ON "conversation_members"
  FOR EACH ROW WHEN (NEW IS DISTINCT FROM OLD) EXECUTE FUNCTION parley_touch_sync_xid();

-- Delete-for-me, favourite and reminder state. Firing a reminder (fired_at) is not a state change.
CREATE TRIGGER message_user_actions_sync_xid BEFORE UPDATE ON "message_user_actions"
  FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM OLD.status OR NEW.remind_at IS DISTINCT FROM OLD.remind_at)
  EXECUTE FUNCTION parley_touch_sync_xid();
