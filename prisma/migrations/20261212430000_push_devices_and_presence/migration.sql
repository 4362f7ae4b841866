-- Issue 43: offline devices. Push devices, unique per (platform, token) through the token's SHA-256
-- (a token may be 4096 characters, past a btree entry's size), and each user's presence setting and
-- the time their last live subscription closed.

-- CreateEnum
CREATE TYPE "PushPlatform" AS ENUM ('APNS', 'FCM', 'HUAWEI');

-- CreateTable
CREATE TABLE "push_devices" (
    "id" BIGSERIAL NOT NULL,
    "user_id" BIGINT NOT NULL,
    "platform" "PushPlatform" NOT NULL,
    "token" VARCHAR(4096) NOT NULL,
    "token_sha256" BYTEA NOT NULL,
    "app_id" VARCHAR(255),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_notified_at" TIMESTAMPTZ(3),

    CONSTRAINT "push_devices_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "push_devices_platform_token_sha256_key" ON "push_devices"("platform", "token_sha256");

-- CreateIndex
CREATE INDEX "push_devices_user_id_idx" ON "push_devices"("user_id");

-- AddForeignKey
ALTER TABLE "push_devices" ADD CONSTRAINT "push_devices_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AlterTable
ALTER TABLE "users" ADD COLUMN "presence_visible" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN "last_seen_at" TIMESTAMPTZ(3);

-- CreateTable
-- The push outbox: one job per ADDED message, written in the send's transaction when push is on.
-- Recipients are resolved when the job runs, in chunks of members in user id order, and
-- cursor_user_id keeps the last chunk sent, so a retry goes on from there.
CREATE TABLE "push_jobs" (
    "id" BIGSERIAL NOT NULL,
    "conversation_id" BIGINT NOT NULL,
    "seq" BIGINT NOT NULL,
    "cursor_user_id" BIGINT NOT NULL DEFAULT 0,
    "failed" BOOLEAN NOT NULL DEFAULT false,
    "round_attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" VARCHAR(500),
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "leased_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "push_jobs_pkey" PRIMARY KEY ("conversation_id", "id")
);

-- CreateIndex
CREATE INDEX "push_jobs_failed_next_attempt_at_idx" ON "push_jobs"("failed", "next_attempt_at");
