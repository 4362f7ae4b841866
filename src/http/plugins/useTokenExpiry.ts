import type { Plugin } from 'graphql-yoga'
import type { WebSocket } from 'ws'
import type { AccountWatch } from '../../domain/governance/index.ts'
import type { Context } from '../../schema/context.ts'

/** setTimeout's longest delay; a token valid for longer (or without exp) is not timed here. */
const MAX_DELAY_MS = 2 ** 31 - 1

/** Ends `stream` when `expiresAt` (ms since the epoch) passes; returns the timer's cancel. */
function endAtExpiry(expiresAt: number | undefined, end: () => void): () => void {
  const delay = (expiresAt ?? Infinity) - Date.now()
  if (!(delay <= MAX_DELAY_MS)) return () => {}
  const timer = setTimeout(end, Math.max(0, delay))
  return () => clearTimeout(timer)
}

/** graphql-ws's Forbidden, as a refused connection gets: its client reconnects with fresh connectionParams. */
const TOKEN_EXPIRED = 4403
/** graphql-ws's Unauthorized: its client does not reconnect. */
const DEACTIVATED = 4401

/**
 * A WebSocket lives as long as its token: at exp it closes with 4403, and the client reconnects
 * with a fresh one (graphql-ws retries this code; decision 0043). A deactivated user's sockets close
 * at once, on every instance, with 4401 (decision 0284).
 */
export function limitSocketLifetime(
  socket: WebSocket,
  expiresAt: number,
  accounts: AccountWatch,
  userId: number,
): void {
  const cancel = endAtExpiry(expiresAt, () => socket.close(TOKEN_EXPIRED, 'Forbidden: token expired'))
  const unwatch = accounts.endOnDeactivation(userId, () => socket.close(DEACTIVATED, 'Unauthorized: user deactivated'))
  socket.once('close', () => {
    cancel()
    unwatch()
  })
}

/**
 * A subscription lives no longer than the token it was made with (issue 48), nor than its user's
 * activation (issue 45: deactivateUser ends it at once, on any instance): at its exp the stream
 * ends (SSE: the response ends; graphql-ws: the subscription completes, and the socket itself
 * closes with 4403, http/server.ts), so a client must come back with a fresh token. One timer per
 * open subscription, cleared when it ends first.
 */
export function useTokenExpiry(): Plugin {
  return {
    onSubscribe({ args }) {
      const context = args.contextValue as Partial<Context>
      return {
        onSubscribeResult({ result }) {
          if (!(Symbol.asyncIterator in result)) return
          const end = () => void result.return?.()
          const cancel = endAtExpiry(context.tokenExpiresAt, end)
          const unwatch = context.viewer
            ? context.app?.accounts.endOnDeactivation(context.viewer.userId, end)
            : undefined
          return {
            onEnd: () => {
              cancel()
              unwatch?.()
            },
          }
        },
      }
    },
  }
}
