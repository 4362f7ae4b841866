-- Friendship (issue 46, decision 0275): one row per user and peer, the pair's state as that user
-- sees it, so each side's lists, counts and sync read only their own rows. A pair has both rows or
-- none, and "no longer friends" is the state NONE rather than a deleted row, so the change has a row
-- carrying its transaction for account sync (decision 0080).

-- CreateEnum
CREATE TYPE "FriendshipState" AS ENUM ('NONE', 'REQUESTED_BY_VIEWER', 'REQUESTED_BY_THEM', 'FRIENDS');

-- CreateTable
CREATE TABLE "friendships" (
    "user_id" BIGINT NOT NULL,
    "peer_id" BIGINT NOT NULL,
    "state" "FriendshipState" NOT NULL,
    "changed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sync_xid" xid8 NOT NULL DEFAULT pg_current_xact_id(),

    CONSTRAINT "friendships_pkey" PRIMARY KEY ("user_id","peer_id")
);

-- CreateIndex
CREATE INDEX "friendships_user_id_state_changed_at_idx" ON "friendships"("user_id", "state", "changed_at");

-- CreateIndex
CREATE INDEX "friendships_user_id_sync_xid_peer_id_idx" ON "friendships"("user_id", "sync_xid", "peer_id");

-- AddForeignKey
ALTER TABLE "friendships" ADD CONSTRAINT "friendships_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "friendships" ADD CONSTRAINT "friendships_peer_id_fkey" FOREIGN KEY ("peer_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- A state change is a change for account sync, like the sync migration's member rows.
CREATE TRIGGER friendships_sync_xid BEFORE UPDATE ON "friendships"
  FOR EACH ROW WHEN (NEW.state IS DISTINCT FROM OLD.state) EXECUTE FUNCTION parley_touch_sync_xid();
