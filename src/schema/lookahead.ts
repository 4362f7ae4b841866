import { getArgumentValues, getNamedType, isObjectType, type FieldNode, type GraphQLResolveInfo } from 'graphql'

/**
 * The arguments of `name` when the operation selects it exactly once directly under the field being
 * resolved, with no directive on it; else null. Lets a resolver read ahead for its child in the
 * same statement. A guess only: the child's own resolver still runs and checks its arguments.
 */
export function childFieldArgs(info: GraphQLResolveInfo, name: string): Record<string, unknown> | null {
  const type = getNamedType(info.returnType)
  const field = isObjectType(type) ? type.getFields()[name] : undefined
  if (!field) return null
  const selected = info.fieldNodes.flatMap((node) => node.selectionSet?.selections.filter((s): s is FieldNode => s.kind === 'Field' && s.name.value === name) ?? [])
  if (selected.length !== 1 || selected[0]!.directives?.length) return null
  try {
    return getArgumentValues(field, selected[0]!, info.variableValues)
  } catch {
    return null
  }
}
