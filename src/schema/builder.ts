import SchemaBuilder from '@pothos/core'
import RelayPlugin from '@pothos/plugin-relay'
import ScopeAuthPlugin from '@pothos/plugin-scope-auth'
import { DomainError } from '../errors.ts'
import { decodeGlobalId, encodeGlobalId } from '../ids.ts'
import type { AuthedContext, Context } from './context.ts'

/** Only the builder: no types are defined here (they live next to their queries in this folder). */
export const builder = new SchemaBuilder<{
  Context: Context
  AuthScopes: { authenticated: boolean; operator: boolean }
  AuthContexts: { authenticated: AuthedContext; operator: AuthedContext }
  DefaultFieldNullability: false
  Scalars: {
    ID: { Input: string; Output: string | number }
    DateTime: { Input: Date; Output: Date }
    SafeInt: { Input: number; Output: number }
    JSON: { Input: unknown; Output: unknown }
  }
}>({
  plugins: [ScopeAuthPlugin, RelayPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authScopes: (ctx) => ({ authenticated: ctx.viewer !== null, operator: ctx.viewer?.isOperator === true }),
    unauthorizedError: (_parent, ctx) =>
      ctx.viewer
        ? new DomainError('FORBIDDEN', 'this needs an operator token')
        : new DomainError('UNAUTHENTICATED', 'sign in with "Authorization: Bearer <token>"'),
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    // node(id) is defined in node.ts so that a bad id gets BAD_USER_INPUT and a hidden one NOT_FOUND.
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    encodeGlobalID: (typename, id) => encodeGlobalId(typename, id),
    decodeGlobalID: (id) => {
      const { type, key } = decodeGlobalId(id)
      return { typename: type, id: key }
    },
  },
})
