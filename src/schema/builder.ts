import SchemaBuilder from '@pothos/core'
import RelayPlugin from '@pothos/plugin-relay'
import ScopeAuthPlugin from '@pothos/plugin-scope-auth'
import TracingPlugin, { isRootField } from '@pothos/plugin-tracing'
import { createOpenTelemetryWrapper } from '@pothos/tracing-opentelemetry'
import { DomainError } from '../domain/core/index.ts'
import { decodeGlobalId, encodeGlobalId } from '../domain/core/index.ts'
import SyncNodeIdsPlugin from './nodeIds.ts'
import { tracer } from '../ops/tracing.ts'
import type { AuthedContext, Context } from './context.ts'

/**
 * A span per query and mutation root field: each resolves by calling one domain action, so this is
 * the action's span (named like "Mutation.sendMessage"). No arguments are recorded: they carry text.
 */
const traceRootField = createOpenTelemetryWrapper(tracer, {
  includeArgs: false,
  onSpan: (span, _options, _parent, _args, _context, info) =>
    span.updateName(`${info.parentType.name}.${info.fieldName}`),
})

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
  plugins: [TracingPlugin, ScopeAuthPlugin, RelayPlugin, SyncNodeIdsPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authScopes: (ctx) => ({ authenticated: ctx.viewer !== null, operator: ctx.viewer?.isOperator === true }),
    unauthorizedError: (_parent, ctx) =>
      ctx.viewer
        ? new DomainError('FORBIDDEN', 'this needs an operator token')
        : new DomainError('UNAUTHENTICATED', 'sign in with "Authorization: Bearer <token>"'),
  },
  tracing: {
    // A subscription's resolver runs once per event, long after its operation: no span.
    default: (config) => isRootField(config) && config.parentType !== 'Subscription',
    wrap: (resolver, options) => traceRootField(resolver, options),
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
