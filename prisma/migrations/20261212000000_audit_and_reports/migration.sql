-- Issue 45: the audit trail of operator reads and governance actions, and members' reports of
-- messages. Audit entries are written in the transaction of what they record and never changed
-- through the API. Newest first is id order.

-- CreateTable
CREATE TABLE "audit_entries" (
    "id" BIGSERIAL NOT NULL,
    "actor_id" BIGINT NOT NULL,
    "action" VARCHAR(64) NOT NULL,
    "target_id" VARCHAR(200),
    "detail" JSONB,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "message_reports" (
    "conversation_id" BIGINT NOT NULL,
    "id" BIGSERIAL NOT NULL,
    "seq" BIGINT NOT NULL,
    "reporter_id" BIGINT NOT NULL,
    "reason" VARCHAR(500) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMPTZ(3),
    "resolved_by_id" BIGINT,

    CONSTRAINT "message_reports_pkey" PRIMARY KEY ("conversation_id","id")
);

-- CreateIndex
CREATE INDEX "audit_entries_actor_id_id_idx" ON "audit_entries"("actor_id", "id");

-- CreateIndex
CREATE INDEX "audit_entries_action_id_idx" ON "audit_entries"("action", "id");

-- CreateIndex
CREATE INDEX "message_reports_resolved_at_id_idx" ON "message_reports"("resolved_at", "id");

-- One open report per reporter and message: a repeat while it is open is a no-op
CREATE UNIQUE INDEX "message_reports_open_key" ON "message_reports"("conversation_id", "seq", "reporter_id") WHERE "resolved_at" IS NULL;

-- AddForeignKey
ALTER TABLE "audit_entries" ADD CONSTRAINT "audit_entries_actor_id_fkey" FOREIGN KEY ("actor_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message_reports" ADD CONSTRAINT "message_reports_conversation_id_seq_fkey" FOREIGN KEY ("conversation_id", "seq") REFERENCES "messages"("conversation_id", "seq") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message_reports" ADD CONSTRAINT "message_reports_reporter_id_fkey" FOREIGN KEY ("reporter_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
