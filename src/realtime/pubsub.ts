import { createPubSub } from 'graphql-yoga'
import { conversationTopic, userTopic, type RealtimeEvent } from './events.ts'

export type Realtime = {
  publish(events: readonly RealtimeEvent[]): void
  subscribe(topic: string): AsyncIterable<RealtimeEvent>
}

/** Routes each event to its topic: one per conversation, one per user (never a global topic plus a filter). */
export function topicsOf(event: RealtimeEvent): string[] {
  switch (event.type) {
    case 'message':
    case 'typing':
      return [conversationTopic(event.conversationId)]
    case 'read':
      return [conversationTopic(event.conversationId), userTopic(event.userId)]
    case 'joined':
    case 'removed':
    case 'reminderDue':
    case 'messageAction':
      return [userTopic(event.userId)]
  }
}

/** In-process pub/sub. */
export function createRealtime(): Realtime {
  const pubsub = createPubSub<Record<string, [RealtimeEvent]>>()
  return {
    publish(events) {
      for (const event of events) for (const topic of topicsOf(event)) pubsub.publish(topic, event)
    },
    subscribe: (topic) => pubsub.subscribe(topic),
  }
}
