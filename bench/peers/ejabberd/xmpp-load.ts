// The ejabberd peer's load generator (forked by bench/scenarios/ejabberd.ts): XMPP clients as raw
// XML over TCP, in a process of their own as Parley's load client is. Raw XML, not @xmpp/client:
// thousands of connections share two cores with both servers, and a client that only logs in, joins
// a room, sends and counts <body> elements needs no XML parser.
import net from 'node:net'

const DOMAIN = 'localhost'
const MUC = `conference.${DOMAIN}`

/** One logged-in XMPP session: each groupchat body it receives goes to `onBody`. */
class Session {
  private buffer = ''
  private waiting: { marker: string; resolve(): void; reject(error: Error): void } | null = null

  private constructor(
    private readonly socket: net.Socket,
    private readonly onBody: (text: string) => void,
  ) {
    socket.setEncoding('utf8')
    socket.setNoDelay(true)
    socket.on('data', (chunk: string) => this.receive(chunk))
    // Sessions end only with this process: a session ejabberd closed fails the run instead of hanging it.
    socket.on('close', () => {
      console.error(`[xmpp] ejabberd closed a session: ${this.buffer.slice(-300)}`)
      process.exit(1)
    })
  }

  static async open(port: number, user: string, onBody: (text: string) => void): Promise<Session> {
    const socket = net.connect(port, '127.0.0.1')
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
    const session = new Session(socket, onBody)
    const stream = `<?xml version='1.0'?><stream:stream to='${DOMAIN}' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>`
    await session.exchange(stream, '</stream:features>')
    const plain = Buffer.from(`\0${user}\0pw`).toString('base64')
    await session.exchange(
      `<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>${plain}</auth>`,
      '<success',
    )
    await session.exchange(stream, '</stream:features>')
    await session.exchange(
      `<iq type='set' id='bind'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>bench</resource></bind></iq>`,
      '</jid>',
    )
    return session
  }

  /** Joins `room` (created by its first occupant) without history; resolves on the self-presence (status 110). */
  join(room: string, nick: string): Promise<void> {
    return this.exchange(
      `<presence to='${room}@${MUC}/${nick}'><x xmlns='http://jabber.org/protocol/muc'><history maxstanzas='0'/></x></presence>`,
      "code='110'",
    )
  }

  send(room: string, text: string): void {
    this.socket.write(`<message to='${room}@${MUC}' type='groupchat'><body>${text}</body></message>`)
  }

  private exchange(xml: string, marker: string): Promise<void> {
    const answered = new Promise<void>((resolve, reject) => (this.waiting = { marker, resolve, reject }))
    this.socket.write(xml)
    return answered
  }

  private receive(chunk: string): void {
    this.buffer += chunk
    if (this.waiting) {
      const refused = this.buffer.includes('<failure') || this.buffer.includes("type='error'")
      if (!refused && !this.buffer.includes(this.waiting.marker)) return
      if (refused) return this.waiting.reject(new Error(`XMPP refused: ${this.buffer.slice(0, 500)}`))
      const { resolve } = this.waiting
      this.waiting = null
      this.buffer = ''
      return resolve()
    }
    for (;;) {
      const start = this.buffer.indexOf('<body>')
      if (start < 0) {
        // A '<body>' split across chunks keeps its beginning.
        this.buffer = this.buffer.slice(-5)
        return
      }
      const end = this.buffer.indexOf('</body>', start)
      if (end < 0) {
        this.buffer = this.buffer.slice(start)
        return
      }
      this.onBody(this.buffer.slice(start + 6, end))
      this.buffer = this.buffer.slice(end + 7)
    }
  }
}

/** Sessions of every member of every room, and the messages waiting for their deliveries. */
const state = {
  rooms: [] as Session[][],
  pending: new Map<string, { left: number; resolve(): void }>(),
}

const onBody = (text: string) => {
  const wait = state.pending.get(text)
  if (wait && --wait.left === 0) {
    state.pending.delete(text)
    wait.resolve()
  }
}

/** Sends `text` into room `g` as its first member; resolves once every occupant has it. */
function deliver(g: number, text: string): Promise<void> {
  const room = state.rooms[g]!
  const delivered = new Promise<void>((resolve) => state.pending.set(text, { left: room.length, resolve }))
  room[0]!.send(`g${g}`, text)
  return delivered
}

const jobs = {
  /** Logs in `members` users per room (user m<g>_<k>) and joins each to its room `g<g>`, ROOMS_OPENING rooms at a time. */
  async open(a: { port: number; rooms: number; members: number }) {
    const ROOMS_OPENING = 8
    const openRoom = async (g: number) => {
      const room = await Promise.all(
        Array.from({ length: a.members }, (_, k) => Session.open(a.port, `m${g}_${k}`, onBody)),
      )
      // The first joiner creates the room; the others join it together.
      await room[0]!.join(`g${g}`, 'm0')
      await Promise.all(room.slice(1).map((session, k) => session.join(`g${g}`, `m${k + 1}`)))
      return room
    }
    for (let g = 0; g < a.rooms; g += ROOMS_OPENING)
      state.rooms.push(
        ...(await Promise.all(Array.from({ length: Math.min(ROOMS_OPENING, a.rooms - g) }, (_, i) => openRoom(g + i)))),
      )
  },

  /** `senders` concurrent senders, each message delivered to every occupant before its sender sends again: messages per second. */
  async run(a: { senders: number; durationMs: number; tag: string }) {
    const started = performance.now()
    const deadline = started + a.durationMs
    let delivered = 0
    await Promise.all(
      Array.from({ length: a.senders }, async (_, s) => {
        for (let i = 0; performance.now() < deadline; i++) {
          await deliver((s + i * a.senders) % state.rooms.length, `${a.tag}-${s}-${i}`)
          delivered++
        }
      }),
    )
    return delivered / ((performance.now() - started) / 1000)
  },
}

export type XmppJobs = typeof jobs

process.on('disconnect', () => process.exit())
process.on('message', ({ id, job, args }: { id: number; job: keyof XmppJobs; args: never }) => {
  ;(jobs[job] as (a: unknown) => Promise<unknown>)(args).then(
    (result) => process.send!({ id, result }),
    (error: unknown) => process.send!({ id, error: String(error instanceof Error ? error.stack : error) }),
  )
})
