-- CreateEnum
CREATE TYPE "UserKind" AS ENUM ('HUMAN', 'AGENT');

-- CreateEnum
CREATE TYPE "ConversationType" AS ENUM ('PRIVATE', 'GROUP', 'CHANNEL');

-- CreateEnum
CREATE TYPE "HistoryVisibility" AS ENUM ('SHARED', 'JOINED');

-- CreateEnum
CREATE TYPE "MemberRole" AS ENUM ('OWNER', 'ADMIN', 'MEMBER', 'SUBSCRIBER');

-- CreateEnum
CREATE TYPE "SenderType" AS ENUM ('USER', 'AGENT', 'SYSTEM');

-- CreateEnum
CREATE TYPE "MessageKind" AS ENUM ('TEXT', 'IMAGE', 'AUDIO', 'VIDEO', 'FILE', 'STICKER', 'CARD', 'FORWARD', 'MATERIAL', 'SYSTEM');

-- CreateEnum
CREATE TYPE "MessageStatus" AS ENUM ('NORMAL', 'EDITED', 'RECALLED');

-- CreateEnum
CREATE TYPE "UserAction" AS ENUM ('DELETE', 'FAVORITE', 'REMINDER');

-- CreateEnum
CREATE TYPE "ActionStatus" AS ENUM ('ACTIVE', 'INACTIVE');

-- CreateTable
CREATE TABLE "users" (
    "id" BIGSERIAL NOT NULL,
    "handle" VARCHAR(128) NOT NULL,
    "display_name" VARCHAR(128) NOT NULL,
    "kind" "UserKind" NOT NULL DEFAULT 'HUMAN',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "conversations" (
    "id" BIGSERIAL NOT NULL,
    "type" "ConversationType" NOT NULL,
    "title" VARCHAR(200),
    "history_visibility" "HistoryVisibility" NOT NULL DEFAULT 'SHARED',
    "private_key" VARCHAR(64),
    "last_seq" BIGINT NOT NULL DEFAULT 0,
    "last_pts" BIGINT NOT NULL DEFAULT 0,
    "last_activity_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_by_id" BIGINT,

    CONSTRAINT "conversations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "conversation_members" (
    "conversation_id" BIGINT NOT NULL,
    "user_id" BIGINT NOT NULL,
    "role" "MemberRole" NOT NULL,
    "visible_from_seq" BIGINT NOT NULL DEFAULT 1,
    "last_read_seq" BIGINT NOT NULL DEFAULT 0,
    "last_read_at" TIMESTAMPTZ(3),
    "muted_until" TIMESTAMPTZ(3),
    "joined_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "left_at" TIMESTAMPTZ(3),

    CONSTRAINT "conversation_members_pkey" PRIMARY KEY ("conversation_id","user_id")
);

-- CreateTable
CREATE TABLE "messages" (
    "conversation_id" BIGINT NOT NULL,
    "seq" BIGINT NOT NULL,
    "pts" BIGINT NOT NULL,
    "sender_type" "SenderType" NOT NULL,
    "sender_id" BIGINT,
    "kind" "MessageKind" NOT NULL,
    "client_message_id" VARCHAR(128),
    "content" JSONB NOT NULL,
    "quoted_seq" BIGINT,
    "mention_user_ids" BIGINT[] DEFAULT ARRAY[]::BIGINT[],
    "mention_all" BOOLEAN NOT NULL DEFAULT false,
    "visible_to" BIGINT[] DEFAULT ARRAY[]::BIGINT[],
    "status" "MessageStatus" NOT NULL DEFAULT 'NORMAL',
    "sent_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "edited_at" TIMESTAMPTZ(3),
    "recalled_at" TIMESTAMPTZ(3),
    "recalled_by_id" BIGINT,

    CONSTRAINT "messages_pkey" PRIMARY KEY ("conversation_id","seq")
);

-- CreateTable
CREATE TABLE "message_edits" (
    "conversation_id" BIGINT NOT NULL,
    "seq" BIGINT NOT NULL,
    "version" INTEGER NOT NULL,
    "content" JSONB NOT NULL,
    "edited_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "message_edits_pkey" PRIMARY KEY ("conversation_id","seq","version")
);

-- CreateTable
CREATE TABLE "message_user_actions" (
    "conversation_id" BIGINT NOT NULL,
    "seq" BIGINT NOT NULL,
    "user_id" BIGINT NOT NULL,
    "action" "UserAction" NOT NULL,
    "status" "ActionStatus" NOT NULL DEFAULT 'ACTIVE',
    "remind_at" TIMESTAMPTZ(3),
    "fired_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "message_user_actions_pkey" PRIMARY KEY ("conversation_id","seq","user_id","action")
);

-- CreateTable
CREATE TABLE "user_blocks" (
    "blocker_id" BIGINT NOT NULL,
    "blocked_id" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "user_blocks_pkey" PRIMARY KEY ("blocker_id","blocked_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "users_handle_key" ON "users"("handle");

-- CreateIndex
CREATE UNIQUE INDEX "conversations_private_key_key" ON "conversations"("private_key");

-- CreateIndex
CREATE INDEX "conversation_members_user_id_left_at_idx" ON "conversation_members"("user_id", "left_at");

-- CreateIndex
CREATE INDEX "messages_sent_at_idx" ON "messages"("sent_at");

-- CreateIndex
CREATE INDEX "messages_sender_id_sent_at_idx" ON "messages"("sender_id", "sent_at");

-- CreateIndex
CREATE UNIQUE INDEX "messages_idempotency_key" ON "messages"("conversation_id", "sender_type", "sender_id", "client_message_id");

-- CreateIndex
CREATE UNIQUE INDEX "messages_conversation_id_pts_key" ON "messages"("conversation_id", "pts");

-- CreateIndex
CREATE INDEX "message_user_actions_user_id_action_status_updated_at_idx" ON "message_user_actions"("user_id", "action", "status", "updated_at");

-- CreateIndex
CREATE INDEX "message_user_actions_action_status_fired_at_remind_at_idx" ON "message_user_actions"("action", "status", "fired_at", "remind_at");

-- AddForeignKey
ALTER TABLE "conversation_members" ADD CONSTRAINT "conversation_members_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "conversation_members" ADD CONSTRAINT "conversation_members_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "messages" ADD CONSTRAINT "messages_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message_edits" ADD CONSTRAINT "message_edits_conversation_id_seq_fkey" FOREIGN KEY ("conversation_id", "seq") REFERENCES "messages"("conversation_id", "seq") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message_user_actions" ADD CONSTRAINT "message_user_actions_conversation_id_seq_fkey" FOREIGN KEY ("conversation_id", "seq") REFERENCES "messages"("conversation_id", "seq") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_blocks" ADD CONSTRAINT "user_blocks_blocker_id_fkey" FOREIGN KEY ("blocker_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_blocks" ADD CONSTRAINT "user_blocks_blocked_id_fkey" FOREIGN KEY ("blocked_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
