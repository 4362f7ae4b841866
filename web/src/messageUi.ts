import { inject, provide, reactive, type InjectionKey } from 'vue'
import type { BubbleFragment } from './gql/graphql.ts'

type ForwardItems = Extract<NonNullable<BubbleFragment['content']>, { __typename: 'ForwardContent' }>

/**
 * The message side's shared state, provided by the workbench to every bubble and menu below it:
 * the open thread, multi-select, the forward dialog, and an opened merged forward.
 */
function createMessageUi() {
  const state = reactive({
    threadRootId: null as string | null,
    selecting: false,
    selected: [] as string[],
    forwarding: null as { messageIds: string[]; merged: boolean } | null,
    opened: null as ForwardItems | null,
    openThread(id: string) {
      state.threadRootId = id
    },
    select(id: string) {
      state.selecting = true
      if (!state.selected.includes(id)) state.selected.push(id)
    },
    toggle(id: string) {
      state.selected = state.selected.includes(id) ? state.selected.filter((s) => s !== id) : [...state.selected, id]
    },
    forward(messageIds: string[], merged: boolean) {
      state.forwarding = { messageIds, merged }
    },
    /** Another conversation was opened: nothing of the last one stays open. */
    reset() {
      Object.assign(state, { threadRootId: null, selecting: false, selected: [], forwarding: null, opened: null })
    },
  })
  return state
}

type MessageUi = ReturnType<typeof createMessageUi>
const KEY: InjectionKey<MessageUi> = Symbol('message-ui')

export function provideMessageUi(): MessageUi {
  const ui = createMessageUi()
  provide(KEY, ui)
  return ui
}

export const useMessageUi = (): MessageUi => inject(KEY)!

type ForwardedItem = ForwardItems['items'][number]

/** One line of a merged forward's item: its text, or its kind in brackets. */
export function forwardLine(item: ForwardedItem): string {
  const c = item.content
  if (c.__typename === 'TextContent' || c.__typename === 'SystemContent') return c.text
  if (c.__typename === 'FileContent') return `[file] ${c.name}`
  if (c.__typename === 'StickerContent') return `[sticker] ${c.label ?? ''}`
  return `[${item.kind.toLowerCase()}]`
}
