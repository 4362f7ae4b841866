import { computed, nextTick, ref, watch, type Ref } from 'vue'
import { useQuery } from '@urql/vue'
import { Chat, ChatAround } from './operations.ts'

/** Messages in a window around one message (a search hit, the first unread). */
const WINDOW = 40
/** How near an end of the scroller (px) counts as reaching it. */
const EDGE = 40

/**
 * A conversation's history as the message panel shows it, in one of two modes:
 * - the newest page, with the page before prepended each time the reader reaches the top
 *   (messages(last, before), merged by relayPagination): only the pages scrolled through load;
 * - a window around one message (messagesAround) that slides as the reader reaches either end,
 *   replaced rather than grown; at the newest end it hands back to the newest page.
 * The message at the edge the reader reached stays where it was on screen while pages change.
 */
export function useHistory(conversationId: string, scroller: Ref<HTMLElement | null>) {
  const before = ref<string | null>(null)
  const chat = useQuery({ query: Chat, variables: computed(() => ({ id: conversationId, before: before.value })) })
  const around = ref<number | null>(null)
  const win = useQuery({
    query: ChatAround,
    variables: computed(() => ({ id: conversationId, seq: around.value ?? 1, count: WINDOW })),
    pause: computed(() => around.value === null),
  })
  const conversation = computed(() => chat.data.value?.conversation)
  const windowPage = computed(() => (around.value === null ? null : win.data.value?.conversation?.messagesAround))
  const messages = computed(
    () => (around.value === null ? conversation.value?.messages : windowPage.value)?.edges.map((e) => e.node) ?? [],
  )

  const page = computed(() =>
    around.value === null ? conversation.value?.messages.pageInfo : windowPage.value?.pageInfo,
  )
  const hasOlder = computed(() => !!page.value?.hasPreviousPage)

  const find = (seq: number) => scroller.value?.querySelector<HTMLElement>(`[data-seq="${seq}"]`) ?? null
  const offsetOf = (el: HTMLElement) => el.getBoundingClientRect().top - scroller.value!.getBoundingClientRect().top
  /** The message to keep in place while the pages change, where it was, and the ends shown then. */
  let anchor: { seq: number; offset: number; ends: string } | null = null
  const endsOf = (list: { seq: number }[]) => `${list[0]?.seq}-${list.at(-1)?.seq}`
  function keep(seq: number) {
    const el = find(seq)
    anchor = el && { seq, offset: offsetOf(el), ends: endsOf(messages.value) }
  }
  /** The message to bring into view once it has loaded (a jump). */
  const target = ref<number | null>(null)
  let revealing = false
  watch(messages, async (list) => {
    await nextTick()
    const el = scroller.value!
    if (revealing && target.value !== null && find(target.value)) {
      find(target.value)!.scrollIntoView({ block: 'center' })
      revealing = false
    } else if (anchor && endsOf(list) !== anchor.ends && find(anchor.seq)) {
      el.scrollTop += offsetOf(find(anchor.seq)!) - anchor.offset
      anchor = null
      // Still at an end (a short page): the next one, as a scroll there would ask.
      onScroll()
    }
  })

  function jumpTo(seq: number) {
    anchor = null
    target.value = seq
    revealing = true
    around.value = seq
    // Already loaded (the same window): no new result will come to trigger the watcher.
    if (find(seq) && win.data.value) void nextTick(() => find(seq)?.scrollIntoView({ block: 'center' }))
  }
  function toLatest() {
    target.value = null
    around.value = null
    void nextTick(() => scroller.value?.scrollTo({ top: scroller.value.scrollHeight }))
  }

  function onScroll() {
    const el = scroller.value!
    const first = messages.value[0]
    const last = messages.value.at(-1)
    if (anchor || !first || !last) return
    if (el.scrollTop < EDGE) {
      if (!hasOlder.value) return
      keep(first.seq)
      if (around.value !== null) around.value = first.seq
      else if (conversation.value?.messages.pageInfo.startCursor)
        before.value = conversation.value.messages.pageInfo.startCursor
    } else if (around.value !== null && el.scrollHeight - el.scrollTop - el.clientHeight < EDGE) {
      keep(last.seq)
      around.value = windowPage.value?.pageInfo.hasNextPage ? last.seq : null
    }
  }

  return { conversation, messages, hasOlder, around, target, jumpTo, toLatest, onScroll }
}
