import type { MessageKey } from '../domain/core/index.ts'
import type { Conn } from './sql.ts'

/** A leased push job: the message, and the last recipient whose notifications went out. */
export type PushJob = MessageKey & { id: number; cursorUserId: number; roundAttempts: number }

/** Writes one job per message (in the send's transaction): one row, whatever the conversation's size. */
export async function enqueuePushJobs(conn: Conn, keys: readonly MessageKey[]): Promise<void> {
  // A message still streaming is pushed when its stream ends (then it is no longer STREAMING), with its text.
  await conn.$executeRaw`
    INSERT INTO push_jobs (conversation_id, seq)
    SELECT k.conversation_id, k.seq
    FROM unnest(${keys.map((k) => k.conversationId)}::bigint[], ${keys.map((k) => k.seq)}::bigint[]) AS k(conversation_id, seq)
    JOIN messages m ON m.conversation_id = k.conversation_id AND m.seq = k.seq
    WHERE m.status <> 'STREAMING'`
}

/** Leases up to `limit` due jobs (SKIP LOCKED: any number of workers share the table; a dead worker's lease runs out). */
export async function claimPushJobs(conn: Conn, limit: number, leaseMs: number): Promise<PushJob[]> {
  const rows = await conn.$queryRaw<
    { id: bigint; conversationId: bigint; seq: bigint; cursorUserId: bigint; roundAttempts: number }[]
  >`
    WITH due AS (
      SELECT conversation_id, id FROM push_jobs
      WHERE NOT failed AND next_attempt_at <= now() AND (leased_until IS NULL OR leased_until < now())
      ORDER BY next_attempt_at LIMIT ${limit}
      FOR UPDATE SKIP LOCKED)
    UPDATE push_jobs j SET leased_until = now() + ${leaseMs} * interval '1 millisecond'
    FROM due WHERE j.conversation_id = due.conversation_id AND j.id = due.id
    RETURNING j.id, j.conversation_id AS "conversationId", j.seq, j.cursor_user_id AS "cursorUserId",
      j.round_attempts AS "roundAttempts"`
  return rows.map((r) => ({
    id: Number(r.id),
    conversationId: Number(r.conversationId),
    seq: Number(r.seq),
    cursorUserId: Number(r.cursorUserId),
    roundAttempts: r.roundAttempts,
  }))
}

/** Keeps the job's progress (and its lease) after a chunk went out. */
export async function advancePushJob(conn: Conn, job: PushJob, cursorUserId: number, leaseMs: number): Promise<void> {
  await conn.$executeRaw`
    UPDATE push_jobs SET cursor_user_id = ${cursorUserId}, round_attempts = 0,
      leased_until = now() + ${leaseMs} * interval '1 millisecond'
    WHERE conversation_id = ${job.conversationId} AND id = ${job.id}`
}

export const finishPushJob = (conn: Conn, job: PushJob) =>
  conn.$executeRaw`DELETE FROM push_jobs WHERE conversation_id = ${job.conversationId} AND id = ${job.id}`

/** A failed attempt: tried again after `retryInMs`, or (null) failed for good. */
export async function failPushJob(conn: Conn, job: PushJob, error: string, retryInMs: number | null): Promise<void> {
  await conn.$executeRaw`
    UPDATE push_jobs SET round_attempts = round_attempts + 1, last_error = ${error.slice(0, 500)}, leased_until = NULL,
      failed = ${retryInMs === null},
      next_attempt_at = now() + ${retryInMs ?? 0} * interval '1 millisecond'
    WHERE conversation_id = ${job.conversationId} AND id = ${job.id}`
}

/** Deletes failed jobs older than `keepMs`. */
export const deleteOldPushJobs = (conn: Conn, keepMs: number) =>
  conn.$executeRaw`DELETE FROM push_jobs WHERE failed AND created_at < now() - ${keepMs} * interval '1 millisecond'`
