import { GraphQLError } from 'graphql'
import { handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga'
import { tagWithRequest } from '../../ops/logger.ts'
import type { Context } from '../../schema/context.ts'

/**
 * Tags the errors of each result with the operation's request id before the mask (a later plugin)
 * sees them, so the mask's log line names the request.
 */
export function useErrorRequestIds(): Plugin<Context> {
  const tagAll =
    (requestId: string | undefined) =>
    ({ result }: { result: { errors?: readonly GraphQLError[] } }) => {
      for (const error of result.errors ?? []) tagWithRequest(error.originalError ?? error, requestId)
    }
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: (payload) => handleStreamOrSingleExecutionResult(payload, tagAll(args.contextValue.requestId)),
    }),
    onSubscribe: ({ args }) => ({
      onSubscribeResult: (payload) => handleStreamOrSingleExecutionResult(payload, tagAll(args.contextValue.requestId)),
      onSubscribeError: ({ error }) =>
        tagWithRequest((error as GraphQLError).originalError ?? error, args.contextValue.requestId),
    }),
  }
}
