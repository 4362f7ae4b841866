import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core'
import type { GraphQLFieldResolver } from 'graphql'
import { encodeGlobalId } from '../domain/core/index.ts'

/**
 * A node's `id` as a plain function of its record: the relay plugin's id resolver is async, so each
 * node in a result cost three promises and made its whole execution asynchronous (graphql-jit then
 * settles the result through promises too); a resume replay executes one per change. Same text:
 * the key, as a string, encoded by encodeGlobalId, as the plugin's encodeGlobalID option does.
 */
class SyncNodeIdsPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    if (fieldConfig.kind !== 'Object' || fieldConfig.name !== 'id') return resolver
    const typeConfig = this.buildCache.getTypeConfig(fieldConfig.parentType)
    // Node types: the relay plugin marks them, and keeps their options' id resolver.
    if (typeConfig.kind !== 'Object' || !('pothosParseGlobalID' in (typeConfig.extensions ?? {}))) return resolver
    const keyOf = (
      typeConfig.pothosOptions as { id?: { resolve?: GraphQLFieldResolver<unknown, Types['Context'], object> } }
    ).id?.resolve
    if (!keyOf) return resolver
    const typename = typeConfig.name
    return (parent, args, context, info) => {
      const key = keyOf(parent, args, context, info) as string | number | bigint | PromiseLike<unknown>
      return typeof key === 'object' ? resolver(parent, args, context, info) : encodeGlobalId(typename, String(key))
    }
  }
}

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      syncNodeIds: SyncNodeIdsPlugin<Types>
    }
  }
}

SchemaBuilder.registerPlugin('syncNodeIds', SyncNodeIdsPlugin)

export default 'syncNodeIds' as const
