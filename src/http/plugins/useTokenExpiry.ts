import type { Plugin } from 'graphql-yoga'
import type { Context } from '../../schema/context.ts'

/** setTimeout's longest delay; a token valid for longer (or without exp) is not timed here. */
const MAX_DELAY_MS = 2 ** 31 - 1

/** Ends `stream` when `expiresAt` (ms since the epoch) passes; returns the timer's cancel. */
export function endAtExpiry(expiresAt: number | undefined, end: () => void): () => void {
  const delay = (expiresAt ?? Infinity) - Date.now()
  if (!(delay <= MAX_DELAY_MS)) return () => {}
  const timer = setTimeout(end, Math.max(0, delay))
  return () => clearTimeout(timer)
}

/**
 * A subscription lives no longer than the token it was made with (issue 48): at its exp the stream
 * ends (SSE: the response ends; graphql-ws: the subscription completes, and the socket itself
 * closes with 4403, http/server.ts), so a client must come back with a fresh token. One timer per
 * open subscription, cleared when it ends first.
 */
export function useTokenExpiry(): Plugin {
  return {
    onSubscribe({ args }) {
      const expiresAt = (args.contextValue as Partial<Context>).tokenExpiresAt
      return {
        onSubscribeResult({ result }) {
          if (!(Symbol.asyncIterator in result)) return
          const cancel = endAtExpiry(expiresAt, () => void result.return?.())
          return { onEnd: cancel }
        },
      }
    },
  }
}
