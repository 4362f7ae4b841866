/** The brute-force model test/reads/unread-model.test.ts compares the API with, and its random source. */

export { seededRandom as random } from './random.ts'

export type ModelMessage = {
  seq: number
  sender: number | null
  mentions: number[]
  all: boolean
  to: number[]
  recalled: boolean
}
/** `dnd`, `markedUnread`, `archived`: the member's own settings, kept across leaving and rejoining. */
export type ModelMember = {
  current: boolean
  visibleFrom: number
  pos: number
  dnd: boolean
  markedUnread: boolean
  archived: boolean
}
export const SETTINGS_OFF = { dnd: false, markedUnread: false, archived: false }

/** One conversation as the contract defines it; users are indices into the scenario's user list. */
export class ConversationModel {
  readonly messages: ModelMessage[] = []
  readonly members = new Map<number, ModelMember>()
  readonly deleted = new Set<string>()
  constructor(
    readonly id: string,
    readonly type: 'PRIVATE' | 'GROUP',
    readonly joinedHistory: boolean,
    public lastSeq: number,
    memberIds: number[],
  ) {
    for (let seq = 1; seq <= lastSeq; seq++)
      this.messages.push({ seq, sender: null, mentions: [], all: false, to: [], recalled: false })
    for (const u of memberIds) this.members.set(u, { current: true, visibleFrom: 1, pos: 0, ...SETTINGS_OFF })
  }
  current = () => [...this.members].filter(([, m]) => m.current).map(([u]) => u)
  isDeleted = (u: number, m: ModelMessage) => this.deleted.has(`${u}:${m.seq}`)
  /** The shared visibility rule: membership window, directed audience, delete-for-me. */
  sees(u: number, m: ModelMessage, ignoringDelete = false): boolean {
    const member = this.members.get(u)
    if (!member?.current || m.seq < member.visibleFrom) return false
    if (m.to.length && m.sender !== u && !m.to.includes(u)) return false
    return ignoringDelete || !this.isDeleted(u, m)
  }
  unread(u: number) {
    const pos = this.members.get(u)!.pos
    const unread = this.messages.filter(
      (m) => m.sender !== null && m.sender !== u && !m.recalled && m.seq > pos && this.sees(u, m),
    )
    return {
      unreadCount: unread.length,
      mentionedUnreadCount: unread.filter((m) => m.all || m.mentions.includes(u)).length,
    }
  }
  /** Current members other than the sender who could see the message by its own rules (not by deletions). */
  receipt(m: ModelMessage) {
    const audience = this.current().filter(
      (u) => u !== m.sender && this.members.get(u)!.visibleFrom <= m.seq && (!m.to.length || m.to.includes(u)),
    )
    const readers = audience.filter((u) => this.members.get(u)!.pos >= m.seq)
    return { readers, notRead: audience.filter((u) => !readers.includes(u)) }
  }
  /** Viewer.unreadTotal's share: nothing in do-not-disturb; marked unread with nothing unread counts 1. */
  totalShare(u: number) {
    const member = this.members.get(u)!
    if (member.dnd) return 0
    return this.unread(u).unreadCount || (member.markedUnread ? 1 : 0)
  }
  append(m: Omit<ModelMessage, 'seq' | 'recalled'>): ModelMessage {
    const message = { ...m, seq: ++this.lastSeq, recalled: false }
    this.messages.push(message)
    if (m.sender === null) return message
    // Sending moves the sender's read position; only markConversationRead clears markedUnread.
    this.members.get(m.sender)!.pos = message.seq
    // A message that alerts a member brings their archived conversation back (a mention breaks through do-not-disturb).
    for (const u of this.current()) {
      const member = this.members.get(u)!
      if (u !== m.sender && this.sees(u, message) && (!member.dnd || m.all || m.mentions.includes(u)))
        member.archived = false
    }
    return message
  }
  read(u: number, seq: number) {
    const member = this.members.get(u)!
    member.pos = Math.max(member.pos, Math.min(seq, this.lastSeq))
    member.markedUnread = false
  }
}
