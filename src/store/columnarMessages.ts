import { dateFromMs, type MessageRecord } from './records.ts'
import { Prisma, epochMs } from './sql.ts'

/**
 * Messages read as columns inside a statement's JSON value (a history page, an inbox page's last
 * messages, decision 0245): one array per field every message fills, instead of one row or one
 * array per message, and the fields most messages leave at their defaults as one sparse list
 * (decision 0261).
 */
type DenseTuple = [
  seq: number,
  pts: number,
  senderType: MessageRecord['senderType'],
  senderId: number | null,
  kind: MessageRecord['kind'],
  clientMessageId: string | null,
  content: unknown,
  status: MessageRecord['status'],
  sentAt: number,
]

/** A message with any of these fields off its default (a quote, a mention, an edit…), keyed by the message. */
type SparseTuple = [
  conversationId: number,
  seq: number,
  quotedSeq: number | null,
  mentionUserIds: number[],
  mentionAll: boolean,
  visibleTo: number[],
  editedAt: number | null,
  recalledAt: number | null,
  recalledById: number | null,
  reactionsPts: number | null,
  forwardedFrom: MessageRecord['forwardedFrom'],
  threadRootSeq: number | null,
  inConversation: boolean,
]

/**
 * Messages as one JSON array per dense field, in DenseTuple's order, each in the rows' order (json_agg
 * of no rows is null, so for no messages every one is null), then the sparse list.
 */
type ColumnsOf<Tuple extends unknown[]> = { [K in keyof Tuple]: Tuple[K][] }
export type ColumnarMessages = [...ColumnsOf<DenseTuple>, SparseTuple[]]

/** A column of the rows `p`. */
const field = (column: string) => Prisma.raw(`p.${column}`)

/**
 * The fields every message fills, timestamps as epoch milliseconds (epochMs). They are aggregated one
 * JSON array per field, not one array per message: json_build_array looks up each argument's type
 * and its cast to json on every call, where json_agg looks its argument's type up once per aggregate;
 * that was about a third of the statement's backend time. Without keys the text is half as long for pg too.
 */
const DENSE_FIELDS = [
  ...['seq', 'pts', '"senderType"', '"senderId"', 'kind', '"clientMessageId"', 'content', 'status'].map(field),
  epochMs('p."sentAt"'),
]

/**
 * The fields most messages leave at their defaults, with the test that a message does not: a page of
 * plain messages then costs no aggregate per such field (about a tenth of a history page's backend
 * CPU, and a third of its text, decision 0261), and a message that is not plain costs one
 * json_build_array. IS DISTINCT FROM, as the array columns may hold null.
 */
const SPARSE_FIELDS: [Prisma.Sql, Prisma.Sql][] = [
  [field('"quotedSeq"'), Prisma.sql`p."quotedSeq" IS NOT NULL`],
  [field('"mentionUserIds"'), Prisma.sql`p."mentionUserIds" IS DISTINCT FROM '{}'`],
  [field('"mentionAll"'), Prisma.sql`p."mentionAll" IS DISTINCT FROM false`],
  [field('"visibleTo"'), Prisma.sql`p."visibleTo" IS DISTINCT FROM '{}'`],
  [epochMs('p."editedAt"'), Prisma.sql`p."editedAt" IS NOT NULL`],
  [epochMs('p."recalledAt"'), Prisma.sql`p."recalledAt" IS NOT NULL`],
  [field('"recalledById"'), Prisma.sql`p."recalledById" IS NOT NULL`],
  [field('"reactionsPts"'), Prisma.sql`p."reactionsPts" IS NOT NULL`],
  [field('"forwardedFrom"'), Prisma.sql`p."forwardedFrom" IS NOT NULL`],
  [field('"threadRootSeq"'), Prisma.sql`p."threadRootSeq" IS NOT NULL`],
  [field('"inConversation"'), Prisma.sql`NOT p."inConversation"`],
]

const sparseList = Prisma.sql`coalesce(json_agg(json_build_array(p."conversationId", p.seq, ${Prisma.join(SPARSE_FIELDS.map(([value]) => value))}))
  FILTER (WHERE ${Prisma.join(
    SPARSE_FIELDS.map(([, offDefault]) => offDefault),
    ' OR ',
  )}), '[]')`

/**
 * ColumnarMessages of the rows of `p` (MESSAGE_COLUMNS' names). The aggregates of one SELECT take the
 * same rows in the same order, so the arrays line up field by field, and with any other aggregate of
 * that SELECT. That order is the input's in practice (no join above it), without a sort per field, but
 * PostgreSQL does not promise it: a reader that needs an order sorts the records.
 */
export const columnarMessages = Prisma.sql`json_build_array(${Prisma.join([...DENSE_FIELDS.map((f) => Prisma.sql`json_agg(${f})`), sparseList])})`

const keyOf = (conversationId: number, seq: number) => `${conversationId}:${seq}`

/** The records of ColumnarMessages; `conversationIdAt(i)`: the conversation of the i-th (not a column of DENSE_FIELDS). */
export function messagesFromColumns(
  columns: ColumnarMessages,
  conversationIdAt: (i: number) => number,
): MessageRecord[] {
  const [seq, pts, senderType, senderId, kind, clientMessageId, content, status, sentAt, sparse] = columns
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
      quotedSeq: null,
      mentionUserIds: [],
      mentionAll: false,
      visibleTo: [],
      status: status[i]!,
      sentAt: new Date(sentAt[i]!),
      editedAt: null,
      recalledAt: null,
      recalledById: null,
      reactionsPts: null,
      forwardedFrom: null,
      threadRootSeq: null,
      inConversation: true,
    })
  }
  if (!sparse.length) return messages
  const byKey = new Map(messages.map((m) => [keyOf(m.conversationId, m.seq), m]))
  for (const [
    conversationId,
    seq,
    quotedSeq,
    mentionUserIds,
    mentionAll,
    visibleTo,
    editedAt,
    recalledAt,
    recalledById,
    reactionsPts,
    forwardedFrom,
    threadRootSeq,
    inConversation,
  ] of sparse) {
    const message = byKey.get(keyOf(conversationId, seq))!
    Object.assign(message, {
      quotedSeq,
      mentionUserIds,
      mentionAll,
      visibleTo,
      editedAt: dateFromMs(editedAt),
      recalledAt: dateFromMs(recalledAt),
      recalledById,
      reactionsPts,
      forwardedFrom,
      threadRootSeq,
      inConversation,
    })
  }
  return messages
}
