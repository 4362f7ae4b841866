import { getOperationAST } from 'graphql'
import type { Plugin } from 'graphql-yoga'
import type { ReplicaRouter } from '../../db/replicas.ts'
import type { Context } from '../../schema/context.ts'

/**
 * Marks each mutation's viewer as writing from its start until its result is ready (decision 0288):
 * meanwhile and until a replica has replayed past its end, that viewer's reads go to the primary, so
 * the page a client asks for after a mutation's answer holds what the mutation wrote. In memory: no
 * statement is added to the write. Installed only with read replicas.
 */
export function useReadYourWrites(replicas: ReplicaRouter): Plugin {
  return {
    onExecute({ args }) {
      const viewer = (args.contextValue as Partial<Context>).viewer
      if (!viewer || getOperationAST(args.document, args.operationName)?.operation !== 'mutation') return
      const written = replicas.writing(viewer.userId)
      return { onExecuteDone: written }
    },
  }
}
