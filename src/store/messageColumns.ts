import { dateFromMs, type MessageRecord } from './records.ts'
import { Prisma, epochMs } from './sql.ts'

/**
 * Messages read as columns inside a statement's JSON value (a history page, an inbox page's last
 * messages, decision 0245): one array per field instead of one row or one array per message.
 */
type MessageTuple = [
  seq: number,
  pts: number,
  senderType: MessageRecord['senderType'],
  senderId: number | null,
  kind: MessageRecord['kind'],
  clientMessageId: string | null,
  content: unknown,
  quotedSeq: number | null,
  mentionUserIds: number[],
  mentionAll: boolean,
  visibleTo: number[],
  status: MessageRecord['status'],
  sentAt: number,
  editedAt: number | null,
  recalledAt: number | null,
  recalledById: number | null,
  reactionsPts: number | null,
  forwardedFrom: MessageRecord['forwardedFrom'],
]

/**
 * Messages as one JSON array per field, in MessageTuple's order, each in the rows' order (json_agg
 * of no rows is null, so for no messages every field is null).
 */
type ColumnsOf<Tuple extends unknown[]> = { [K in keyof Tuple]: Tuple[K][] }
export type MessageColumns = ColumnsOf<MessageTuple>

/** A column of the rows `p`. */
const field = (column: string) => Prisma.raw(`p.${column}`)

/**
 * The fields of a message in MessageTuple's order, timestamps as epoch milliseconds
 * (epochMs). They are aggregated one JSON array per field (messageColumns), not one array per
 * message: json_build_array looks up each argument's type and its cast to json on every call, 18
 * arguments a row, where json_agg looks its argument's type up once per aggregate; that was about a
 * third of the statement's backend time. Without keys the page's text is half as long for pg too.
 */
const MESSAGE_FIELDS = [
  ...['seq', 'pts', '"senderType"', '"senderId"', 'kind', '"clientMessageId"', 'content', '"quotedSeq"', '"mentionUserIds"', '"mentionAll"', '"visibleTo"', 'status'].map(field),
  ...['"sentAt"', '"editedAt"', '"recalledAt"'].map((column) => epochMs(`p.${column}`)),
  ...['"recalledById"', '"reactionsPts"', '"forwardedFrom"'].map(field),
]

/**
 * MessageColumns of the rows of `p` (MESSAGE_COLUMNS' names). The aggregates of one SELECT take the
 * same rows in the same order, so the arrays line up field by field, and with any other aggregate of
 * that SELECT. That order is the input's in practice (no join above it), without 18 sorts, but
 * PostgreSQL does not promise it: a reader that needs an order sorts the records.
 */
export const messageColumns = Prisma.sql`json_build_array(${Prisma.join(MESSAGE_FIELDS.map((field) => Prisma.sql`json_agg(${field})`))})`

/** The records of MessageColumns; `conversationIdAt(i)`: the conversation of the i-th (not a column of MESSAGE_FIELDS). */
export function messagesFromColumns(columns: MessageColumns, conversationIdAt: (i: number) => number): MessageRecord[] {
  const [seq, pts, senderType, senderId, kind, clientMessageId, content, quotedSeq, mentionUserIds, mentionAll, visibleTo, status, sentAt, editedAt, recalledAt, recalledById, reactionsPts, forwardedFrom] =
    columns
  const messages: MessageRecord[] = []
  // `!`: every index below the count is there (a nullable field's element may be null).
  for (let i = 0; i < ((seq as number[] | null)?.length ?? 0); i++) {
    messages.push({
      conversationId: conversationIdAt(i),
      seq: seq[i]!,
      pts: pts[i]!,
      senderType: senderType[i]!,
      senderId: senderId[i]!,
      kind: kind[i]!,
      clientMessageId: clientMessageId[i]!,
      content: content[i],
      quotedSeq: quotedSeq[i]!,
      mentionUserIds: mentionUserIds[i]!,
      mentionAll: mentionAll[i]!,
      visibleTo: visibleTo[i]!,
      status: status[i]!,
      sentAt: new Date(sentAt[i]!),
      editedAt: dateFromMs(editedAt[i]!),
      recalledAt: dateFromMs(recalledAt[i]!),
      recalledById: recalledById[i]!,
      reactionsPts: reactionsPts[i]!,
      forwardedFrom: forwardedFrom[i]!,
    })
  }
  return messages
}
