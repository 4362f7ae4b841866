import { ref } from 'vue'

/**
 * A message to show when its conversation opens (a search result): the message panel opens around
 * it with messagesAround, whether it was open already or opens for it.
 */
export const jumpTarget = ref<{ conversationId: string; seq: number } | null>(null)
