// Scenario 3's floor: Parley's own read of a history page (store/history.ts readConversationPage, the
// statement npm start's server sends for the README query) served by node:http with no GraphQL server
// behind it: read the POST, read the page, answer the README query's JSON. In its own process;
// arguments: database URL, conversation id, reader id. Prints its URL once listening.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { createDb } from '../src/db/client.ts'
import { SEQ_CURSOR, seqCursor } from '../src/domain/history/history.ts'
import { readConversationPage } from '../src/store/history.ts'

const [databaseUrl, conversationId, readerId] = process.argv.slice(2)
const db = createDb(databaseUrl!, { poolSize: 40 })
const reader = { userId: Number(readerId) }
const PAGE = 50

async function answer(body: string): Promise<string> {
  const { variables } = JSON.parse(body) as { variables: { before?: string | null } }
  const options = {
    afterSeq: null,
    beforeSeq: SEQ_CURSOR.decode(variables.before, 'before')?.[0] ?? null,
    from: 'end' as const,
    limit: PAGE + 1,
    quoted: false,
  }
  const page = await readConversationPage(db, reader, Number(conversationId), options, null)
  const handles = new Map(page.users.map((u) => [u.id, u.handle]))
  const nodes = page.messages.slice(0, PAGE).reverse()
  const edges = nodes.map((m) => ({
    node: {
      seq: m.seq,
      sender: m.senderId === null ? null : { handle: handles.get(m.senderId) },
      content: { text: (m.content as { text: string }).text },
    },
  }))
  const pageInfo = {
    hasPreviousPage: page.messages.length > PAGE,
    startCursor: nodes.length ? seqCursor(nodes[0]!) : null,
  }
  return JSON.stringify({ data: { conversation: { messages: { edges, pageInfo } } } })
}

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    answer(Buffer.concat(chunks).toString()).then(
      (json) => {
        response.writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(json),
        })
        response.end(json)
      },
      (error: unknown) => {
        response.writeHead(500).end(String(error))
      },
    )
  })
})
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`))
