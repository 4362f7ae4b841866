import { isUtf8 } from 'node:buffer'
import type { Socket } from 'node:net'
import type { ExecutionResult } from 'graphql'
import { WebSocket } from 'ws'

/**
 * The server side of each graphql-ws socket: frames batched per event-loop turn, a result's payload
 * serialised once for every subscription it goes to, and only UTF-8 let in.
 */

/** A `next` frame's payload as graphql-ws stringifies it: the text is spliced in by the socket's send. */
const PAYLOAD_MARK = '\u0000parley-payload'
const MARKED_END = `"payload":${JSON.stringify(PAYLOAD_MARK)}}`
/** Each result's payload text, kept as long as the result: subscribers with the same view share one result. */
const payloadTexts = new WeakMap<object, string>()
/** The payload text of the frame being stringified, until that frame's send splices it in. */
let pendingPayload: string | null = null

/**
 * graphql-ws's hooks that serialise each `next` payload once per result, not once per subscription
 * (decision 0296): subscribers of an event with the same view get the same result object
 * (http/plugins/useCompiledExecution.ts), and only the subscription id differs between their
 * frames. `onNext` hands graphql-ws that object itself (it would copy it), and the replacer puts a
 * mark where its text goes. graphql-ws stringifies a frame and hands it to the socket in one
 * synchronous step, so the text the replacer leaves is the one the next marked frame takes.
 */
export const sharedPayloads = {
  onNext: (_ctx: unknown, _id: string, _payload: unknown, _args: unknown, result: ExecutionResult) => result,
  jsonMessageReplacer(this: unknown, key: string, value: unknown): unknown {
    if (key !== 'payload' || (this as { type?: unknown }).type !== 'next' || typeof value !== 'object' || !value)
      return value
    let text = payloadTexts.get(value)
    if (text === undefined) payloadTexts.set(value, (text = JSON.stringify(value)))
    pendingPayload = text
    return PAYLOAD_MARK
  },
}

/** A marked `next` frame with its payload's text in place of the mark. */
function withPayload(data: SendData): SendData {
  if (pendingPayload === null || typeof data !== 'string' || !data.endsWith(MARKED_END)) return data
  const frame = `${data.slice(0, -MARKED_END.length)}"payload":${pendingPayload}}`
  pendingPayload = null
  return frame
}

/** Bytes a socket may hold unsent before a frame's sender waits for the network (backpressure). */
const SEND_HIGH_WATER = 256 * 1024

/**
 * graphql-ws awaits each frame's write callback before it pulls the next event, so a burst (a
 * resume replay) cost one write syscall and one event-loop turn per event. Here the frames sent
 * before the event loop's next check phase go out in one write (the socket stays corked until
 * then; setImmediate, not nextTick, because each event's DataLoader dispatch is itself a tick), and
 * a frame counts as sent once queued while the socket holds less than SEND_HIGH_WATER bytes. Above
 * that the sender waits for the write as before, so a slow client still holds back its stream and
 * the unsent bytes per socket stay bounded.
 */
type SendData = Parameters<WebSocket['send']>[0]
type SendOptions = Exclude<Parameters<WebSocket['send']>[1], SendCallback | undefined>
type SendCallback = (error?: Error) => void

class BatchingWebSocket extends WebSocket {
  private corked = false

  override send(data: SendData, options?: SendOptions | SendCallback, cb?: SendCallback): void {
    if (typeof options === 'function') return this.send(data, {}, options)
    data = withPayload(data)
    // ws keeps the TCP socket private; it is set once the connection is open.
    const socket = (this as unknown as { _socket?: Socket })._socket
    if (!socket || this.readyState !== WebSocket.OPEN) return super.send(data, options ?? {}, cb)
    if (!this.corked) {
      this.corked = true
      socket.cork()
      setImmediate(() => {
        this.corked = false
        socket.uncork()
      })
    }
    if (!cb || this.bufferedAmount >= SEND_HIGH_WATER) return super.send(data, options ?? {}, cb)
    super.send(data, options ?? {})
    queueMicrotask(cb)
  }
}

/** Close code for a frame that is not valid UTF-8 (RFC 6455), as ws itself uses for text frames. */
const INVALID_PAYLOAD = 1007

/**
 * graphql-ws reads a binary frame with String(data), which turns bytes that are not UTF-8 into
 * U+FFFD unseen; ws checks text frames itself, and this closes the socket on such binary frames too.
 * Frames reach graphql-ws as text: the handler of a subscribe frame lasts as long as its
 * subscription and would keep the frame's bytes besides their text.
 * A client's malformed frame (ws's WS_ERR_* errors: bad UTF-8, too large) is not the server's error:
 * ws closes that socket with the matching code, and graphql-ws would log a stack for each one.
 */
export class Utf8WebSocket extends BatchingWebSocket {
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'message' && Buffer.isBuffer(args[0])) {
      if (args[1] === true && !isUtf8(args[0])) {
        this.close(INVALID_PAYLOAD, 'frames must be UTF-8')
        return false
      }
      return super.emit(event, args[0].toString(), args[1])
    }
    if (event === 'error' && String((args[0] as { code?: unknown } | undefined)?.code).startsWith('WS_ERR_'))
      return false
    return super.emit(event, ...args)
  }
}
