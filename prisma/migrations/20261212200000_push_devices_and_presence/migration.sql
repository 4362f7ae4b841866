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
