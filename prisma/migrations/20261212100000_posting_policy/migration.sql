-- Issue 45: announcement-only groups. ADMINS lets only the OWNER and ADMINs send.

-- CreateEnum
CREATE TYPE "PostingPolicy" AS ENUM ('EVERYONE', 'ADMINS');

-- AlterTable
ALTER TABLE "conversations" ADD COLUMN "posting_policy" "PostingPolicy" NOT NULL DEFAULT 'EVERYONE';
