import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import type { LoadClient } from '../client.ts'
import { createEjabberdDatabase, startEjabberd, startXmppClient } from '../peers/ejabberd/server.ts'
import { startParleyProcess } from '../server-process.ts'
import { insertGroups, insertUsers, withClient } from '../setup.ts'
import { createScenarioDatabase, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

const GROUPS = Number(process.env.BENCH_EJABBERD_GROUPS ?? 200)
const MEMBERS = 32
const SENDERS = 32
const SECONDS = Number(process.env.BENCH_EJABBERD_SECONDS ?? 20)
/** Database connections for each server (Parley's pool; ejabberd's sql_pool_size). */
const POOL = 40
/** What a chat client's inbox shows of a message. */
const INBOX = `subscription Inbox { inboxEvents { __typename ... on MessageEvent { kind pts
  message { id seq sentAt sender { id handle displayName } content { ... on TextContent { text } } conversation { id title } } } } }`
const SEND = `mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { message { seq } } }`

/**
 * SENDERS concurrent senders for `seconds`, message i of sender s into group (s + i·SENDERS) mod
 * GROUPS, each sender waiting until all MEMBERS members have its message before the next: messages
 * per second delivered to every member.
 */
async function sendersFor(seconds: number, deliver: (group: number, text: string) => Promise<unknown>) {
  const started = performance.now()
  const deadline = started + seconds * 1000
  let delivered = 0
  await Promise.all(
    Array.from({ length: SENDERS }, async (_, s) => {
      for (let i = 0; performance.now() < deadline; i++) {
        await deliver((s + i * SENDERS) % GROUPS, `live-${s}-${i}`)
        delivered++
      }
    }),
  )
  return delivered / ((performance.now() - started) / 1000)
}

/** Parley: every member of every group holding an `inboxEvents` stream over graphql-ws (a socket each). */
async function parleyRate(host: DatabaseHost, client: LoadClient) {
  const database = await createScenarioDatabase(host, 'ejabberd_parley')
  try {
    const groups = await withClient(database.url, async (pg) => {
      const ids: number[] = []
      for (let g = 0; g < GROUPS; g++) ids.push(...(await insertGroups(pg, 1, await insertUsers(pg, `g${g}`, MEMBERS))))
      return ids.map((id) => encodeGlobalId('Conversation', id))
    })
    const tokens = await Promise.all(
      Array.from({ length: GROUPS }, (_, g) =>
        Promise.all(Array.from({ length: MEMBERS }, (_, k) => tokenFor(`g${g}-${k}`))),
      ),
    )
    const parley = await startParleyProcess(database.url, { poolSize: POOL })
    try {
      await client.openSubscribers({
        wsUrl: parley.endpoint.replace(/^http/, 'ws'),
        calls: tokens.flat().map((token) => ({ token, query: INBOX })),
        noReplay: true,
      })
      // Sent by the group's first member, as ejabberd's side sends.
      const deliver = (g: number, text: string, timeoutMs?: number) =>
        client.deliver({
          endpoint: parley.endpoint,
          send: {
            token: tokens[g]![0]!,
            query: SEND,
            variables: { input: { conversationId: groups[g], clientMessageId: text, content: { text: { text } } } },
          },
          text,
          audience: MEMBERS,
          timeoutMs,
        })
      // Live once one message of each group reached all its members (a stream may still be attaching).
      await Promise.all(
        groups.map(async (_, g) => {
          for (let attempt = 0; ; attempt++) {
            const live = await deliver(g, `warm-${g}-${attempt}`, 2000).then(
              () => true,
              () => false,
            )
            if (live) return
            if (attempt === 20) throw new Error(`the members of group ${g} never all had a message`)
          }
        }),
      )
      await sendersFor(3, (g, text) => deliver(g, `w${text}`))
      const cpu = parley.cpuSeconds()
      const rate = await sendersFor(SECONDS, deliver)
      await client.closeSubscribers()
      return { rate, cpuMsPerMessage: ((parley.cpuSeconds() - cpu) * 1000) / (rate * SECONDS) }
    } finally {
      await parley.close()
    }
  } finally {
    await database.drop()
  }
}

/** ejabberd: the same groups as MUC rooms with mod_mam archiving in SQL, every member a joined occupant. */
async function ejabberdRate(host: DatabaseHost) {
  const database = await createEjabberdDatabase(host.adminUrl, `parley_bench_ejabberd_${process.pid}`, GROUPS, MEMBERS)
  try {
    const server = await startEjabberd(database.url, POOL)
    const xmpp = startXmppClient()
    try {
      await xmpp.open({ port: server.port, rooms: GROUPS, members: MEMBERS })
      await xmpp.run({ senders: SENDERS, durationMs: 3000, tag: 'warm' })
      const cpu = server.cpuSeconds()
      const rate = await xmpp.run({ senders: SENDERS, durationMs: SECONDS * 1000, tag: 'live' })
      return { rate, cpuMsPerMessage: ((server.cpuSeconds() - cpu) * 1000) / (rate * SECONDS) }
    } finally {
      xmpp.close()
      await server.close()
    }
  } finally {
    await database.drop()
  }
}

/**
 * Scenario 12b (issue 49, item 0): one message delivered live to all 32 members of its group, 200
 * groups, 32 concurrent senders, Parley against ejabberd 23.01 (Debian's package: MUC rooms archived
 * with mod_mam in the same PostgreSQL, bench/peers/ejabberd) in one run: messages per second
 * delivered to every member. ejabberd runs first, then Parley, each on a fresh database.
 */
export async function ejabberd(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const peer = await ejabberdRate(host)
  const ours = await parleyRate(host, client)
  const ratio = ours.rate / peer.rate
  return [
    {
      scenario: `12b fan-out vs ejabberd: one message live to all ${MEMBERS} members, ${GROUPS} groups, ${SENDERS} senders`,
      metric: 'messages/s delivered to every member',
      value: ours.rate.toFixed(0),
      baseline: `${peer.rate.toFixed(0)} (ejabberd 23.01, MUC + mod_mam in SQL)`,
      ratio,
      target: '≥ 1.0',
      met: ratio >= 1,
      note: `${SECONDS} s each after a 3 s warm-up; Parley's members each hold an inboxEvents stream over graphql-ws (a socket each), ejabberd's are joined occupants (raw XML over TCP, no TLS); server CPU per message: Parley ${ours.cpuMsPerMessage.toFixed(2)} ms, ejabberd ${peer.cpuMsPerMessage.toFixed(2)} ms`,
    },
  ]
}
