import { describe, expect, it } from 'vitest'
import { conversationTopic } from '../../src/realtime/events.ts'
import { createBus } from '../../src/realtime/pubsub.ts'
import { Topics } from '../../src/realtime/topics.ts'

/** Topics over the in-process bus whose confirmation fails for the topics in `refused` (as Redis's SUBSCRIBE can). */
function topicsRefusing(refused: Set<string>) {
  const bus = createBus(new EventTarget(), {
    confirm: async (topic) => {
      if (refused.has(topic)) throw new Error(`cannot listen to ${topic}`)
    },
  })
  const emitted: number[] = []
  const topics = new Topics<string>(bus, (event) => emitted.push(event.type === 'message' ? event.pts : -1), {
    startPts: async (id) => id * 10,
    readGap: async () => [],
    log: () => {},
  })
  return { bus, topics, emitted }
}

describe('joining many conversation feeds at once', () => {
  it('resolves with each feed’s start position and shares a feed between subscribers', async () => {
    const { topics } = topicsRefusing(new Set())
    expect(await topics.joinConversations('a', [1, 2, 3])).toEqual(
      new Map([
        [1, 10],
        [2, 20],
        [3, 30],
      ]),
    )
    expect(await topics.joinConversations('b', [3, 4])).toEqual(
      new Map([
        [3, 30],
        [4, 40],
      ]),
    )
    expect(topics.counts.conversationTopics).toBe(4)
    for (const id of [1, 2, 3]) topics.leaveConversation('a', id)
    expect(topics.counts.conversationTopics).toBe(2)
  })

  it('delivers a joined feed’s events past its start position', async () => {
    const { bus, topics, emitted } = topicsRefusing(new Set())
    await topics.joinConversations('a', [5])
    await bus.publish([
      { type: 'message', kind: 'ADDED', conversationId: 5, seq: 50, pts: 50 },
      { type: 'message', kind: 'ADDED', conversationId: 5, seq: 51, pts: 51 },
    ])
    expect(emitted).toEqual([51])
  })

  it('leaves the feeds that failed to listen and throws, the others stay joined until left', async () => {
    const { topics } = topicsRefusing(new Set([conversationTopic(2)]))
    await expect(topics.joinConversations('a', [1, 2, 3])).rejects.toThrow('cannot listen to conversation:2')
    expect(topics.counts.conversationTopics).toBe(2)
    topics.leaveConversation('a', 1)
    topics.leaveConversation('a', 3)
    expect(topics.counts.conversationTopics).toBe(0)
  })
})
