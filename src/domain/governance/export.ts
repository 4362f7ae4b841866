import { listExportRows, type ExportRow } from '../../store/admin.ts'
import { findConversationType } from '../../store/conversations.ts'
import { readerOf, type App, type Viewer } from '../core/app.ts'
import { notFound } from '../core/errors.ts'
import { encodeGlobalId, messageGlobalId, parseId } from '../core/ids.ts'
import { transact } from '../core/transact.ts'
import { requireOperator } from '../policy/policy.ts'
import { recordAudit } from './audit.ts'

/** Messages read per statement: memory stays bounded by this, not by the conversation. */
const EXPORT_PAGE = 500

const userIds = (ids: number[]) => JSON.stringify(ids.map((id) => encodeGlobalId('User', id)))

/**
 * One message as an export line shows it, as adminMessages does: global ids and the sender, then
 * the fields PostgreSQL wrote as JSON (content null once recalled), spliced in as text.
 */
function lineOf(row: ExportRow, conversationId: number): string {
  const sender =
    row.senderId === null || !row.sender ? null : { id: encodeGlobalId('User', row.senderId), ...row.sender }
  const ids = {
    id: messageGlobalId({ conversationId, seq: row.seq }),
    conversationId: encodeGlobalId('Conversation', conversationId),
  }
  const head = `${JSON.stringify(ids).slice(0, -1)},"sender":${JSON.stringify(sender)}`
  return `${head},"mentionUserIds":${userIds(row.mentionUserIds)},"visibleToUserIds":${userIds(row.visibleTo)},${row.fields.slice(1)}\n`
}

/**
 * A page's lines written into one Buffer, never joined into one string first: a string of a page
 * (some 200 KB) lands in V8's large-object space, which only a full collection frees, so an export's
 * pages piled up there until one ran (the server's RSS grew by about as much as the export's size).
 * The Buffer's bytes live outside the heap and go with the first minor collection after the socket
 * has them; the lines are small, young strings.
 */
function pageBytes(lines: string[]): Buffer {
  const bytes = Buffer.allocUnsafe(lines.reduce((n, line) => n + Buffer.byteLength(line), 0))
  let at = 0
  for (const line of lines) at += bytes.write(line, at)
  return bytes
}

/**
 * GET /export/conversations/{id}: operators only (FORBIDDEN), an existing conversation (NOT_FOUND).
 * The audit entry is written before the first line; the lines, one message each in seq order, are
 * read page by page as the caller pulls them, so memory does not grow with the conversation.
 */
export async function exportConversation(
  app: App,
  viewer: Viewer,
  conversationId: string,
): Promise<AsyncGenerator<Buffer>> {
  requireOperator(viewer, 'export conversations')
  const id = parseId(conversationId, 'Conversation')
  await transact(app, async (tx) => {
    if (!(await findConversationType(tx, id))) throw notFound('Conversation')
    await recordAudit(tx, viewer, 'conversation.export', conversationId)
    return { result: null, events: [] }
  })
  /** The page after `afterSeq` as bytes, and its last seq: its rows are garbage before the bytes are yielded. */
  const readPage = async (afterSeq: number) => {
    const page = await listExportRows(readerOf(app, viewer), id, afterSeq, EXPORT_PAGE)
    return page.length ? { bytes: pageBytes(page.map((row) => lineOf(row, id))), lastSeq: page.at(-1)!.seq } : null
  }
  return (async function* lines() {
    // Only the bytes wait across a yield (while the socket drains): rows kept there would outlive
    // young-generation collections and be promoted, growing the old generation with the export.
    for (let page = await readPage(0); page; page = await readPage(page.lastSeq)) yield page.bytes
  })()
}
