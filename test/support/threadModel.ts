import { graphql } from '../gql/index.ts'

/** The brute-force model test/threads/thread-model.test.ts compares unread counts and thread summaries with. */

export type ThreadModelMessage = {
  seq: number
  sender: number | null
  mentions: number[]
  to: number[]
  recalled: boolean
  /** The root's seq for a reply, null for a top-level message. */
  root: number | null
  /** False for a reply not sent alsoInConversation. */
  inConversation: boolean
}

type Member = { current: boolean; visibleFrom: number; pos: number }
type ThreadState = { following: boolean; pos: number }

/** One group with threads as docs/threads.md defines them; users are indices into the scenario's list. */
export class ThreadModel {
  readonly messages: ThreadModelMessage[] = []
  readonly members = new Map<number, Member>()
  /** Each user's state of each thread, by `${user}:${root}`. */
  readonly threads = new Map<string, ThreadState>()
  constructor(
    public lastSeq: number,
    memberIds: number[],
  ) {
    for (let seq = 1; seq <= lastSeq; seq++) this.system(seq)
    for (const u of memberIds) this.members.set(u, { current: true, visibleFrom: 1, pos: 0 })
  }
  private system(seq: number) {
    this.messages.push({ seq, sender: null, mentions: [], to: [], recalled: false, root: null, inConversation: true })
  }
  current = () => [...this.members].filter(([, m]) => m.current).map(([u]) => u)
  sees(u: number, m: ThreadModelMessage): boolean {
    const member = this.members.get(u)
    if (!member?.current || m.seq < member.visibleFrom) return false
    return !m.to.length || m.sender === u || m.to.includes(u)
  }
  at = (seq: number) => this.messages[seq - 1]!
  replies = (root: number) => this.messages.filter((m) => m.root === root)
  private others = (u: number, m: ThreadModelMessage) => m.sender !== null && m.sender !== u && !m.recalled

  /** A system notice (a member added): its seq is the conversation's next. */
  notice(): number {
    this.system(++this.lastSeq)
    return this.lastSeq
  }
  send(m: Omit<ThreadModelMessage, 'seq' | 'recalled'>): ThreadModelMessage {
    const message = { ...m, seq: ++this.lastSeq, recalled: false }
    this.messages.push(message)
    const sender = m.sender!
    // Sending reads the conversation up to the message only when it shows there.
    if (m.inConversation) this.members.get(sender)!.pos = message.seq
    if (m.root === null) return message
    const state = this.threads.get(`${sender}:${m.root}`)
    this.threads.set(`${sender}:${m.root}`, { following: true, pos: Math.max(state?.pos ?? 0, message.seq) })
    const rootSender = this.at(m.root).sender
    for (const u of [...m.mentions, ...(rootSender === null ? [] : [rootSender])])
      if (!this.threads.has(`${u}:${m.root}`)) this.threads.set(`${u}:${m.root}`, { following: true, pos: 0 })
    return message
  }
  read(u: number, seq: number) {
    const member = this.members.get(u)!
    member.pos = Math.max(member.pos, Math.min(seq, this.lastSeq))
  }
  follow(u: number, root: number, following: boolean) {
    this.threads.set(`${u}:${root}`, { following, pos: this.threads.get(`${u}:${root}`)?.pos ?? 0 })
  }
  readThread(u: number, root: number, seq: number | undefined) {
    const last = Math.max(0, ...this.replies(root).map((m) => m.seq))
    const target = Math.min(seq ?? last, last)
    if (target <= 0) return
    const state = this.threads.get(`${u}:${root}`)
    if (!state) this.threads.set(`${u}:${root}`, { following: this.at(root).sender === u, pos: target })
    else state.pos = Math.max(state.pos, target)
  }
  unread(u: number) {
    const pos = this.members.get(u)!.pos
    const unread = this.messages.filter((m) => m.inConversation && this.others(u, m) && m.seq > pos && this.sees(u, m))
    return { unreadCount: unread.length, mentionedUnreadCount: unread.filter((m) => m.mentions.includes(u)).length }
  }
  /** Message.thread of `root` for `u`: null without a reply `u` may see. */
  summary(u: number, root: number) {
    const seen = this.replies(root).filter((m) => this.sees(u, m))
    if (!seen.length) return null
    const state = this.threads.get(`${u}:${root}`) ?? { following: false, pos: 0 }
    const unread = seen.filter((m) => this.others(u, m) && m.seq > state.pos).length
    return {
      replyCount: seen.length,
      viewerFollowing: state.following,
      viewerLastReadSeq: state.pos,
      viewerUnreadCount: state.following ? unread : 0,
    }
  }
}

export const ThreadModelView = graphql(`
  query ThreadModelView($id: ID!) {
    viewer {
      unreadTotal
    }
    conversation(id: $id) {
      unreadCount
      mentionedUnreadCount
      messages(last: 100) {
        edges {
          node {
            seq
            thread {
              replyCount
              viewerFollowing
              viewerLastReadSeq
              viewerUnreadCount
            }
          }
        }
      }
    }
  }
`)
