import { isUtf8 } from 'node:buffer'
import type { Socket } from 'node:net'
import { WebSocket } from 'ws'

/** The server side of each graphql-ws socket: frames batched per event-loop turn, and only UTF-8 let in. */

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
