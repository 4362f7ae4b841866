import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebhookWorker } from '../../src/domain/webhooks/index.ts'
import { newUser, testApp, uniqueHandle, userWithHandle, type TestUser } from '../support/harness.ts'
import { createGroup, SendMessage, UpsertUsers } from '../support/operations.ts'
import { liveServer, subscribeWs, waitForSubscriptions } from '../support/server.ts'
import { eventually, startTestWorker, ViewerWebhooks } from '../support/webhooks.ts'
import { AgentEvents, PressCardAction, ReadCard } from '../support/agents.ts'

/** examples/agent run as its own process against a started server, heard through a real webhook. */

const instance = liveServer()
let worker: WebhookWorker
beforeAll(() => {
  worker = startTestWorker(testApp().app)
})
afterAll(() => worker.stop())

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

type Agent = { user: TestUser; url: string; child: ChildProcess; output: () => string }
const agents: Agent[] = []
afterAll(() => agents.forEach((a) => a.child.kill('SIGKILL')))

/** An AGENT user (made one by an operator) and the example running with its token, once it has registered its webhook. */
async function startAgent(): Promise<Agent> {
  const handle = uniqueHandle('bot')
  const operator = await newUser({ operator: true })
  await operator.run(UpsertUsers, { users: [{ handle, displayName: 'Example Agent', kind: 'AGENT' }] })
  const user = await userWithHandle(handle)
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/agent/agent.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PARLEY_URL: instance.server.url,
      PARLEY_TOKEN: user.token,
      AGENT_PORT: '0',
      AGENT_DELTA_MS: '5',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stderr.on('data', (d) => (output += d))
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      output += d
      const match = / hears (\S+) \(webhook /.exec(output)
      if (match) resolve(match[1]!)
    })
    child.once('exit', (code) => reject(new Error(`the agent exited with ${code}:\n${output}`)))
  })
  const agent = { user, url, child, output: () => output }
  agents.push(agent)
  return agent
}

type Event = { __typename: string; kind?: string; status?: string } & Record<string, unknown>
type Message = { id: string; status: string; senderType: string; content: { text?: string; data?: unknown } }

let sent = 0
const mention = (from: TestUser, conversationId: string, agent: TestUser, text: string) =>
  from.run(SendMessage, {
    input: {
      conversationId,
      clientMessageId: `to-agent-${process.pid}-${++sent}`,
      content: { text: { text } },
      mentionUserIds: [agent.id],
    },
  })

describe('the example agent (examples/agent)', () => {
  it('answers a mention with a streamed reply, handles its approval card, and refuses unsigned requests', async () => {
    const agent = await startAgent()
    const member = await newUser()
    const group = await createGroup(member, [agent.user])
    const live = subscribeWs(instance.connect(member.token), AgentEvents, { conversationId: group.id })
    await waitForSubscriptions(instance.server.app, member, 1)
    const events = () => live.events.map((e) => e.conversationEvents as Event)
    const ofAgent = (e: Event) => (e.message as Message | undefined)?.senderType === 'AGENT'

    // A mention: "thinking…", a STREAMING message, its deltas in order, then STREAM_ENDED once with the text they made.
    await mention(member, group.id, agent.user, `@${agent.user.handle} what is the plan?`)
    await live.waitUntil(() => events().some((e) => e.kind === 'STREAM_ENDED'))
    const added = events().find((e) => e.kind === 'ADDED' && ofAgent(e))!
    const reply = added.message as Message
    expect(reply).toMatchObject({ status: 'STREAMING', content: { text: '' } })
    expect(events()).toContainEqual(
      expect.objectContaining({ __typename: 'TypingEvent', user: { id: agent.user.id }, status: 'thinking…' }),
    )
    const deltas = events().filter((e) => e.__typename === 'MessageStreamEvent' && e.messageId === reply.id)
    expect(deltas.length).toBeGreaterThan(3)
    expect(deltas.map((d) => d.sequence)).toEqual(deltas.map((_, i) => i + 1))
    const text = deltas.map((d) => d.delta).join('')
    expect(deltas.at(-1)!.text).toBe(text)
    expect(text).toContain('what is the plan?')
    const ended = events().filter((e) => e.kind === 'STREAM_ENDED')
    expect(ended).toMatchObject([{ message: { id: reply.id, status: 'NORMAL', content: { text } } }])
    expect(events().indexOf(ended[0]!)).toBeGreaterThan(events().indexOf(deltas.at(-1)!))

    // "approve": a card with two buttons; a press reaches the agent as card.action, and it updates the card.
    await mention(member, group.id, agent.user, `@${agent.user.handle} please approve my leave on Friday`)
    await live.waitUntil(() => events().some((e) => e.kind === 'ADDED' && ofAgent(e) && e !== added))
    const card = events().find((e) => e.kind === 'ADDED' && ofAgent(e) && e !== added)!.message as Message
    expect(card.content.data).toMatchObject({ status: 'pending', requestedBy: member.handle })
    const pressed = (await member.run(PressCardAction, { messageId: card.id, actionId: 'approve' })).pressCardAction
    expect(pressed.content).toMatchObject({ viewerActionId: 'approve', actions: [{ id: 'approve' }, { id: 'reject' }] })
    const decided = await eventually(
      () => member.run(ReadCard, { id: card.id }),
      (r) => (r.node?.content as { data?: { status?: string } }).data?.status !== 'pending',
    )
    expect(decided.node).toMatchObject({
      editedAt: null,
      content: {
        data: { status: 'approved', decidedBy: member.handle, requestedBy: member.handle },
        actions: [],
      },
    })
    await live.waitUntil(() => events().some((e) => e.kind === 'EDITED'))

    // Not signed with the webhook's secret: refused, and nothing is answered.
    const forged = await fetch(agent.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_forged',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': `v1,${Buffer.from('not the signature').toString('base64')}`,
      },
      body: JSON.stringify({ type: 'message.added', data: { conversationId: group.id, message: {} } }),
    })
    expect(forged.status).toBe(401)

    // Stopping deletes its webhook.
    agent.child.kill('SIGTERM')
    expect(await once(agent.child, 'exit')).toEqual([0, null])
    expect((await agent.user.run(ViewerWebhooks, {})).viewer.webhooks).toEqual([])
    expect(agent.output()).not.toMatch(/failed/)
  })
})
