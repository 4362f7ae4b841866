import {
  getNamedType,
  getNullableType,
  getOperationAST,
  getVariableValues,
  isAbstractType,
  isCompositeType,
  isListType,
  Kind,
  visit,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLAbstractType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql'
// graphql-js's own field collection (fragments, type conditions, @skip/@include, merging by response
// key): counting with it fans out exactly as execution does. Internal to graphql 16, pinned in package.json.
import { collectFields, collectSubfields } from 'graphql/execution/collectFields.js'
import { LIMITS } from '../../domain/core/index.ts'

/** nodes: the objects the response can hold; height: the deepest path of fields. */
export type Tally = { nodes: number; height: number }

/** Page-size arguments: a field with one of these returns a page of that many items. */
const PAGE_ARGS = new Set(['first', 'last', 'count'])

/**
 * Lists without a page-size argument are bounded by what was written (100 mentions, targets or
 * forwarded items, a 1 MiB forward snapshot, edits one per change) and short in practice; they count
 * this many items each. Counting each at its maximum would refuse any screen that reuses one content
 * fragment at three levels (100 × 100 × 100). Paged connections, which can be nested at will and each
 * cost a page read, count at their page size.
 */
const PLAIN_LIST_ITEMS = 10
/** Plain lists whose documented size is larger than the estimate. */
const PLAIN_LIST_SIZES: Record<string, number> = {
  // A replay payload carries up to 100 changes (Subscription.conversationEventBatches).
  'ConversationEventBatch.events': 100,
}

/** Page-size arguments whose maximum is not the connections' 100. */
const PAGE_MAXIMUMS: Record<string, number> = {
  // A sync batch holds up to 500 changes (Query.sync's `first`).
  'Query.sync': LIMITS.syncBatch,
}

/** Per document: the variables the count reads (page sizes, @skip/@include), and counts by their values. */
const byDocument = new WeakMap<DocumentNode, { variables: Set<string>; tallies: Map<string, Tally | null> }>()
/** Distinct variable values remembered per document; Yoga's document cache bounds the documents. */
const TALLIES_PER_DOCUMENT = 64

function variablesThatCount(document: DocumentNode): Set<string> {
  const names = new Set<string>()
  visit(document, {
    Argument: (argument) =>
      void (
        argument.value.kind === Kind.VARIABLE &&
        PAGE_ARGS.has(argument.name.value) &&
        names.add(argument.value.name.value)
      ),
    Directive: (directive) => visit(directive, { Variable: (variable) => void names.add(variable.name.value) }),
  })
  return names
}

/**
 * Counts the objects the operation's response can hold, memoized per document and the values of
 * the variables the count reads (the send path's documents read none). Null when nothing will run:
 * no such operation, or variables that do not coerce (refused before execution).
 */
export function tallyOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: unknown,
): Tally | null {
  let cached = byDocument.get(document)
  if (!cached) byDocument.set(document, (cached = { variables: variablesThatCount(document), tallies: new Map() }))
  const raw = (rawVariables ?? {}) as Record<string, unknown>
  const key = JSON.stringify([operationName ?? null, ...[...cached.variables].map((name) => raw[name] ?? null)])
  if (cached.tallies.has(key)) return cached.tallies.get(key)!
  const tally = walk(schema, document, operationName, raw, cached.variables)
  if (cached.tallies.size >= TALLIES_PER_DOCUMENT) cached.tallies.clear()
  cached.tallies.set(key, tally)
  return tally
}

/**
 * Walks the operation the way execution would: fields merged by response key, fragments expanded
 * once per use site, and for an abstract type the costliest of its possible types (each object has
 * exactly one). Every object counts one; a list holds its page (`first`/`last`/`count`, absent = the
 * field's default or 20) or, without a page argument, PLAIN_LIST_ITEMS; everything below a list
 * counts once per item. The list inside a paged connection (edges, messages) is that page, not
 * another. Results are memoized by (type, merged field nodes, page), so a fragment spread at many
 * places costs one walk, not one per path.
 */
function walk(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  raw: Record<string, unknown>,
  counted: Set<string>,
): Tally | null {
  const operation = getOperationAST(document, operationName)
  const rootType = operation && schema.getRootType(operation.operation)
  if (!operation || !rootType) return null
  const definitions = (operation.variableDefinitions ?? []).filter((definition) =>
    counted.has(definition.variable.name.value),
  )
  const coerced = getVariableValues(schema, definitions, raw)
  if (coerced.errors) return null
  const variables = coerced.coerced
  const fragments: Record<string, FragmentDefinitionNode> = {}
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition

  const fieldIds = new Map<FieldNode, number>()
  const idOf = (node: FieldNode) => fieldIds.get(node) ?? (fieldIds.set(node, fieldIds.size + 1), fieldIds.size)
  const memo = new Map<string, Tally>()

  const pageSize = (field: GraphQLField<unknown, unknown>, node: FieldNode, max: number): number | undefined => {
    const args = field.args.filter((arg) => PAGE_ARGS.has(arg.name))
    if (!args.length) return undefined
    const given = args.flatMap((arg) => {
      const value = node.arguments?.find((a) => a.name.value === arg.name)?.value
      const size =
        value?.kind === Kind.INT
          ? Number(value.value)
          : value?.kind === Kind.VARIABLE
            ? variables[value.name.value]
            : undefined
      return typeof size === 'number' ? [size] : []
    })
    const fallback = args.find((arg) => typeof arg.defaultValue === 'number')?.defaultValue as number | undefined
    // More than the page maximum is refused by the resolver (BAD_USER_INPUT), so it never runs.
    return Math.min(Math.max(0, given.length ? Math.max(...given) : (fallback ?? LIMITS.defaultPageSize)), max)
  }

  const tallyFields = (
    type: GraphQLObjectType,
    fields: Map<string, readonly FieldNode[]>,
    pageOf: number | undefined,
  ): Tally => {
    let nodes = 0
    let height = 0
    for (const fieldNodes of fields.values()) {
      const name = fieldNodes[0]!.name.value
      // Introspection is answered from the schema in memory: no reads to bound.
      if (name.startsWith('__')) continue
      const field = type.getFields()[name]!
      const named = getNamedType(field.type)
      if (!isCompositeType(named)) {
        height = Math.max(height, 1)
        continue
      }
      const isList = isListType(getNullableType(field.type))
      const page = pageSize(field, fieldNodes[0]!, PAGE_MAXIMUMS[`${type.name}.${name}`] ?? LIMITS.pageSize)
      // instances: the objects this field holds (one, or a list's items); innerPage: the page that
      // the lists right below it are (a connection's edges).
      let instances = 1
      let innerPage: number | undefined
      if (page !== undefined && !isList) innerPage = page
      else if (isList) instances = page ?? pageOf ?? PLAIN_LIST_SIZES[`${type.name}.${name}`] ?? PLAIN_LIST_ITEMS
      const below = tallyValue(named, fieldNodes, innerPage)
      nodes += instances * (1 + below.nodes)
      height = Math.max(height, 1 + below.height)
    }
    return { nodes, height }
  }

  const tallyValue = (
    type: GraphQLObjectType | GraphQLAbstractType,
    fieldNodes: readonly FieldNode[],
    pageOf: number | undefined,
  ): Tally => {
    const key = `${type.name}|${pageOf}|${fieldNodes.map(idOf).join(',')}`
    const known = memo.get(key)
    if (known) return known
    const tally = { nodes: 0, height: 0 }
    for (const runtimeType of isAbstractType(type) ? schema.getPossibleTypes(type) : [type]) {
      const one = tallyFields(
        runtimeType,
        collectSubfields(schema, fragments, variables, runtimeType, fieldNodes),
        pageOf,
      )
      tally.nodes = Math.max(tally.nodes, one.nodes)
      tally.height = Math.max(tally.height, one.height)
    }
    memo.set(key, tally)
    return tally
  }

  return tallyFields(rootType, collectFields(schema, fragments, variables, rootType, operation.selectionSet), undefined)
}
