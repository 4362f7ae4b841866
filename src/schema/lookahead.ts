import { getArgumentValues, getNamedType, isObjectType, type FieldNode, type GraphQLObjectType, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql'

/**
 * The arguments of `name` when the operation selects it exactly once under the field being resolved,
 * directly or through fragments on its type (as Relay and Apollo send their queries), with no directive
 * on it or on a fragment on the way; else null. Lets a resolver read ahead for its child in the same
 * statement. A guess only: the child's own resolver still runs and checks its arguments.
 */
export function childFieldArgs(info: GraphQLResolveInfo, name: string): Record<string, unknown> | null {
  const type = getNamedType(info.returnType)
  const field = isObjectType(type) ? type.getFields()[name] : undefined
  if (!field) return null
  const selected: FieldNode[] = []
  for (const node of info.fieldNodes) if (node.selectionSet && !collect(info, type as GraphQLObjectType, node.selectionSet, name, selected)) return null
  if (selected.length !== 1 || selected[0]!.directives?.length) return null
  try {
    return getArgumentValues(field, selected[0]!, info.variableValues)
  } catch {
    return null
  }
}

/** Adds the fields called `name` in `set` and its fragments to `out`; false when a directive makes that conditional. */
function collect(info: GraphQLResolveInfo, type: GraphQLObjectType, set: SelectionSetNode, name: string, out: FieldNode[]): boolean {
  const applies = (condition: string | undefined) => !condition || condition === type.name || type.getInterfaces().some((i) => i.name === condition)
  for (const selection of set.selections) {
    if (selection.kind === 'Field') {
      if (selection.name.value === name) out.push(selection)
      continue
    }
    const fragment = selection.kind === 'InlineFragment' ? selection : info.fragments[selection.name.value]
    if (!fragment || !applies(fragment.typeCondition?.name.value)) continue
    if (selection.directives?.length) return false
    if (!collect(info, type, fragment.selectionSet, name, out)) return false
  }
  return true
}
