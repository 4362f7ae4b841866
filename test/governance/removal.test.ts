import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebhookWorker } from '../../src/domain/webhooks/index.ts'
import { graphql } from '../gql/gql.ts'
import { tablesHolding } from '../support/database.ts'
import { onServer, pngOf, ReadMedia, SendMedia, uploadFile } from '../support/files.ts'
import { codes, newUser, newUsers, testApp } from '../support/harness.ts'
import { EditMessage, MessageBySeq } from '../support/lifecycle.ts'
import { ConversationEvents } from '../support/live.ts'
import { createGroup, sendText } from '../support/operations.ts'
import { liveServer, subscribeWs, waitForSubscriptions } from '../support/server.ts'
import { CreateWebhook, startReceiver, startTestWorker } from '../support/webhooks.ts'

const RemoveMessage = graphql(`
  mutation GovernanceRemoveMessage($messageId: ID!, $reason: String!) {
    removeMessage(messageId: $messageId, reason: $reason) {
      id
      status
      content {
        __typename
      }
    }
  }
`)

const RemovalAudit = graphql(`
  query GovernanceRemovalAudit {
    auditLog(action: "message.remove", first: 100) {
      edges {
        node {
          targetId
          detail
        }
      }
    }
  }
`)

const instance = liveServer()
let worker: WebhookWorker
beforeAll(() => {
  worker = startTestWorker(testApp().app)
})
afterAll(() => worker.stop())

/** A word no other test writes. */
const uniqueWord = () => `takedown${Date.now()}${Math.floor(Math.random() * 1e6)}`

describe('removeMessage', () => {
  it('takes a message down for everyone: REMOVED with a pts, erased from the database, a live RECALLED event and a webhook', async () => {
    const operator = await newUser({ operator: true })
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const receiver = await startReceiver()
    await operator.run(CreateWebhook, {
      input: { url: receiver.url, events: ['MESSAGE_RECALLED'], scope: 'ALL', conversationIds: [group.id] },
    })
    const word = uniqueWord()
    const message = (await sendText(bob!, group.id, `first ${word}a`)).message
    await bob!.run(EditMessage, { messageId: message.id, text: `second ${word}b` })
    const events = subscribeWs(instance.connect(alice!.token), ConversationEvents, { conversationId: group.id })
    await waitForSubscriptions(testApp().app, alice!, 1)

    const removed = (await operator.run(RemoveMessage, { messageId: message.id, reason: 'harassment' })).removeMessage
    expect(removed).toEqual({ id: message.id, status: 'REMOVED', content: null })
    expect(await tablesHolding(word)).toEqual([])

    const [event] = await events.waitFor(1)
    expect(event!.conversationEvents).toMatchObject({ kind: 'RECALLED', message: { status: 'REMOVED', content: null } })
    const seen = (await alice!.run(MessageBySeq, { id: group.id, seq: message.seq })).conversation!
    expect(seen.message).toMatchObject({ status: 'REMOVED', content: null, edits: [] })
    expect(seen.lastPts).toBe((event!.conversationEvents as { pts: number }).pts)

    await receiver.until((requests) => requests.length > 0, 'message.recalled')
    const body = receiver.delivered()[0]!
    expect(body.type).toBe('message.recalled')
    expect(body.data.message.id).toBe(message.id)
    expect(body.data.message.text).toBeUndefined()
    await receiver.close()

    // Removing it again changes nothing; the reason is in the audit trail.
    expect((await operator.run(RemoveMessage, { messageId: message.id, reason: 'again' })).removeMessage.status).toBe(
      'REMOVED',
    )
    const audit = (await operator.run(RemovalAudit)).auditLog.edges.map((e) => e.node)
    expect(audit.filter((e) => e.targetId === message.id)).toEqual([
      { targetId: message.id, detail: { reason: 'harassment' } },
    ])
  })

  it('stops granting the attachments of the removed message', async () => {
    const operator = await newUser({ operator: true })
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const attachment = await uploadFile(alice!, instance.server.url, await pngOf(30, 30))
    const sent = await alice!.run(SendMedia, {
      input: {
        conversationId: group.id,
        clientMessageId: uniqueWord(),
        content: { image: { attachmentId: attachment.id } },
      },
    })
    const { seq, id } = sent.sendMessage.message
    const read = (await bob!.run(ReadMedia, { id: group.id, seq })).conversation!.message!
    const bobsUrl = onServer((read.content as { url: string }).url, instance.server.url)
    expect((await fetch(bobsUrl)).status).toBe(200)

    await operator.run(RemoveMessage, { messageId: id, reason: 'copyright' })
    expect((await fetch(bobsUrl)).status).toBe(403)
    expect((await bob!.run(ReadMedia, { id: group.id, seq })).conversation!.message).toMatchObject({
      status: 'REMOVED',
      content: null,
    })
  })

  it('is for operators only (a group owner too is FORBIDDEN), with a reason of 1..500 characters', async () => {
    const operator = await newUser({ operator: true })
    const [alice, bob] = await newUsers(2)
    const group = await createGroup(alice!, [bob!])
    const message = (await sendText(bob!, group.id, 'stays')).message
    expect(codes(await alice!.try(RemoveMessage, { messageId: message.id, reason: 'mine' }))).toEqual(['FORBIDDEN'])
    expect(codes(await operator.try(RemoveMessage, { messageId: message.id, reason: '  ' }))).toEqual([
      'BAD_USER_INPUT',
    ])
    expect(codes(await operator.try(RemoveMessage, { messageId: message.id, reason: 'x'.repeat(501) }))).toEqual([
      'BAD_USER_INPUT',
    ])
    const missing = Buffer.from('Message:999999999:1').toString('base64url')
    expect(codes(await operator.try(RemoveMessage, { messageId: missing, reason: 'gone' }))).toEqual(['NOT_FOUND'])
    const kept = (await alice!.run(MessageBySeq, { id: group.id, seq: message.seq })).conversation!.message!
    expect(kept).toMatchObject({ status: 'NORMAL', content: { text: 'stays' } })
  })
})
