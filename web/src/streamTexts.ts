import { reactive } from 'vue'

/**
 * The text so far of each streamed reply, by message id, kept beside the cache: a query that lands
 * after a delta (the list refetched for the reply's ADDED event, say) writes the older stored text
 * into the cached message, and the next delta may be seconds away. The highest sequence wins.
 */
const texts = reactive(new Map<string, { sequence: number; text: string }>())

export function noteStreamText(event: { messageId: string; sequence: number; text: string }): void {
  const known = texts.get(event.messageId)
  if (!known || event.sequence > known.sequence)
    texts.set(event.messageId, { sequence: event.sequence, text: event.text })
}

/** The freshest text of a streaming message: the last delta's, unless the cache holds a newer one. */
export const streamTextOf = (messageId: string, cached: string): string => {
  const known = texts.get(messageId)?.text
  return known !== undefined && known.length >= cached.length ? known : cached
}
