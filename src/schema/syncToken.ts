import type { GraphQLResolveInfo, SelectionNode } from 'graphql'
import { currentSyncToken } from '../domain/sync/index.ts'
import { viewerOf, type Context } from './context.ts'

/**
 * A sync token stands for what was read after it, so in `viewer { syncToken … }` the viewer
 * resolver takes the token before any field below it reads (prepareSyncToken), once per request.
 */
const tokens = new WeakMap<Context, Promise<string>>()

export function takeSyncToken(ctx: Context): Promise<string> {
  let token = tokens.get(ctx)
  if (!token) tokens.set(ctx, (token = currentSyncToken(ctx.app, viewerOf(ctx))))
  return token
}

/** Whether a `viewer` selection asks for syncToken, directly or through fragments. */
function selectsSyncToken(info: GraphQLResolveInfo): boolean {
  const visit = (selections: readonly SelectionNode[]): boolean =>
    selections.some((s) =>
      s.kind === 'Field'
        ? s.name.value === 'syncToken'
        : s.kind === 'InlineFragment'
          ? visit(s.selectionSet.selections)
          : visit(info.fragments[s.name.value]?.selectionSet.selections ?? []),
    )
  return info.fieldNodes.some((node) => visit(node.selectionSet?.selections ?? []))
}

export async function prepareSyncToken(ctx: Context, info: GraphQLResolveInfo): Promise<void> {
  if (selectsSyncToken(info)) await takeSyncToken(ctx)
}
