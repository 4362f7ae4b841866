import {
  getArgumentValues,
  getNamedType,
  isObjectType,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type SelectionSetNode,
} from 'graphql'

export type ChildField = { args: Record<string, unknown>; node: FieldNode }

/**
 * The arguments of `name` when the operation selects it exactly once under the field being resolved,
 * directly or through fragments on its type (as Relay and Apollo send their queries), with no directive
 * on it or on a fragment on the way; else null. Lets a resolver read ahead for its child in the same
 * statement. A guess only: the child's own resolver still runs and checks its arguments.
 */
export function childField(info: GraphQLResolveInfo, name: string): ChildField | null {
  const type = getNamedType(info.returnType)
  const field = isObjectType(type) ? type.getFields()[name] : undefined
  if (!field) return null
  const selected: FieldNode[] = []
  for (const node of info.fieldNodes)
    if (node.selectionSet && !collect(info, type as GraphQLObjectType, node.selectionSet, name, selected)) return null
  if (selected.length !== 1 || selected[0]!.directives?.length) return null
  try {
    return { args: getArgumentValues(field, selected[0]!, info.variableValues), node: selected[0]! }
  } catch {
    return null
  }
}

/** Adds the fields called `name` in `set` and its fragments to `out`; false when a directive makes that conditional. */
function collect(
  info: GraphQLResolveInfo,
  type: GraphQLObjectType,
  set: SelectionSetNode,
  name: string,
  out: FieldNode[],
): boolean {
  const applies = (condition: string | undefined) =>
    !condition || condition === type.name || type.getInterfaces().some((i) => i.name === condition)
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

/** Per field node (a document's nodes outlive its requests): the names of every field selected below it. */
const namesBelow = new WeakMap<FieldNode, ReadonlySet<string>>()

/**
 * The names of all fields selected anywhere below `nodes`, through every fragment whatever its type
 * condition or directives: a field absent from it cannot be in the response, so a resolver may skip
 * reading for it. Over-inclusive by design (a name is a name at any depth and on any type).
 */
export function fieldNamesBelow(
  fragments: Record<string, FragmentDefinitionNode>,
  nodes: readonly FieldNode[],
): ReadonlySet<string> {
  if (nodes.length === 1) return namesBelowNode(fragments, nodes[0]!)
  return new Set(nodes.flatMap((node) => [...namesBelowNode(fragments, node)]))
}

function namesBelowNode(fragments: Record<string, FragmentDefinitionNode>, node: FieldNode): ReadonlySet<string> {
  const known = namesBelow.get(node)
  if (known) return known
  const names = new Set<string>()
  const spread = new Set<string>()
  const add = (set: SelectionSetNode | undefined): void => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === 'Field') {
        names.add(selection.name.value)
        add(selection.selectionSet)
      } else if (selection.kind === 'InlineFragment') add(selection.selectionSet)
      else if (!spread.has(selection.name.value)) {
        spread.add(selection.name.value)
        add(fragments[selection.name.value]?.selectionSet)
      }
    }
  }
  add(node.selectionSet)
  namesBelow.set(node, names)
  return names
}
