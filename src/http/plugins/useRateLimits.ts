import type { IncomingMessage } from 'node:http'
import { getOperationAST, GraphQLError, type ExecutionArgs, type ExecutionResult } from 'graphql'
import type { Plugin } from 'graphql-yoga'
import type { Parley } from '../../app.ts'
import type { RateRule } from '../../config/rateLimits.ts'
import { callerOf } from '../../domain/rateLimits/index.ts'
import type { Context } from '../../schema/context.ts'

/**
 * Root fields with a rule of their own; every other mutation field, whatever issue added it, counts
 * against `mutation`. sendMessage is counted by the send action, which knows the group's size.
 */
const FIELD_RULES: Record<string, RateRule | null> = {
  sendMessage: null,
  // A send: counted by the send action, as sendMessage is.
  startStreamingMessage: null,
  sendTyping: 'typing',
  sendSignal: 'typing',
  // Counted per stream by the append itself (domain/streams), at an agent's token rate.
  appendToStreamingMessage: null,
}

/** What the address limits read of a request: the HTTP request itself, or what http/server.ts keeps of a WebSocket's upgrade request. */
export type ClientPeer = Pick<IncomingMessage, 'headers'> & { socket: { remoteAddress?: string } }

/** The serving socket (graphql-ws) or HTTP request, as http/server.ts puts them in the context. */
type TransportContext = Context & { req?: ClientPeer; socket?: object }

const socketKeys = new WeakMap<object, string>()
let sockets = 0
const socketKey = (socket: object) => {
  let key = socketKeys.get(socket)
  if (!key) socketKeys.set(socket, (key = `ws-${++sockets}`))
  return key
}

/** The client's address: the socket's peer, or behind a trusted proxy the last X-Forwarded-For entry (the one it added). */
function clientAddress(req: ClientPeer | undefined, trustProxy: boolean): string {
  const forwarded = trustProxy ? req?.headers['x-forwarded-for'] : undefined
  const last = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded)?.split(',').at(-1)?.trim()
  return last || req?.socket.remoteAddress || 'unknown'
}

/** Counts an operation without a valid token against its address (called by the context, before it refuses or answers). */
export function limitAnonymous(app: Parley, req: ClientPeer | undefined): Promise<void> {
  return app.limits.consume('anonymous', { tier: 'user', key: clientAddress(req, app.limits.trustProxy) })
}

/** The count of a mutation or subscription; null when there is none to take (a query, a caller without a token: the context counts those). */
function limitOperation(args: ExecutionArgs): Promise<void> | null {
  const ctx = args.contextValue as TransportContext
  const operation = getOperationAST(args.document, args.operationName)
  if (!ctx.viewer || !operation || operation.operation === 'query') return null
  const caller = callerOf(ctx.viewer)
  // Per connection over graphql-ws (a socket lives on one instance); an SSE stream is its own request, so per user.
  if (operation.operation === 'subscription')
    return ctx.app.limits.consume('subscribe', ctx.socket ? { ...caller, key: socketKey(ctx.socket) } : caller)
  const points = new Map<RateRule, number>()
  for (const selection of operation.selectionSet.selections) {
    const rule =
      selection.kind !== 'Field'
        ? 'mutation'
        : selection.name.value in FIELD_RULES
          ? FIELD_RULES[selection.name.value]!
          : 'mutation'
    if (rule) points.set(rule, (points.get(rule) ?? 0) + 1)
  }
  // sendMessage alone: counted by the send action.
  if (!points.size) return null
  return (async () => {
    for (const [rule, n] of points) await ctx.app.limits.consume(rule, caller, n)
  })()
}

/**
 * Stops the operation with RATE_LIMITED if its count is refused. A query returns nothing, so envelop
 * goes on to execute in the same turn instead of after a promise.
 */
function refuseIfLimited({
  args,
  setResultAndStopExecution,
}: {
  args: ExecutionArgs
  setResultAndStopExecution(result: ExecutionResult): void
}) {
  return limitOperation(args)?.catch((error: unknown) => {
    if (!(error instanceof GraphQLError)) throw error
    setResultAndStopExecution({ errors: [error] })
  })
}

/**
 * Rate limits by operation (decision 0130): mutations by root field, subscriptions per connection.
 * A refused operation runs nothing and answers RATE_LIMITED with extensions.retryAfterMs.
 */
export function useRateLimits(): Plugin {
  return { onExecute: refuseIfLimited, onSubscribe: refuseIfLimited }
}
