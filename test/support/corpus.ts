import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Kind, parse, print, visit, type DefinitionNode, type DocumentNode, type FragmentDefinitionNode } from 'graphql'

const ROOT = join(import.meta.dirname, '..', 'corpus')

export type CorpusOperation = {
  name: string
  document: DocumentNode
  kind: 'query' | 'mutation' | 'subscription'
  source: string
}

/** Fragments a client's operations spread (fragments.graphql in its folder), by name. */
function fragmentsOf(folder: string): Map<string, FragmentDefinitionNode> {
  const file = join(ROOT, folder, 'fragments.graphql')
  const definitions = readdirSync(join(ROOT, folder)).includes('fragments.graphql')
    ? parse(readFileSync(file, 'utf8')).definitions
    : []
  return new Map(definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])))
}

/** The operation with every fragment it spreads, directly or not, appended: the text a client sends. */
function withFragments(operation: DocumentNode, fragments: Map<string, FragmentDefinitionNode>): DocumentNode {
  const included = new Map<string, DefinitionNode>()
  const pending: DefinitionNode[] = [...operation.definitions]
  for (let next = pending.pop(); next; next = pending.pop()) {
    visit(next, {
      FragmentSpread(spread) {
        const fragment = fragments.get(spread.name.value)
        if (fragment && !included.has(spread.name.value)) {
          included.set(spread.name.value, fragment)
          pending.push(fragment)
        }
      },
    })
  }
  return { ...operation, definitions: [...operation.definitions, ...included.values()] }
}

/** Every operation of one corpus folder, in file-name order, with the fragments of `fragmentsFrom`. */
export function loadCorpus(folder: string, fragmentsFrom = folder): CorpusOperation[] {
  const fragments = fragmentsOf(fragmentsFrom)
  return readdirSync(join(ROOT, folder))
    .filter((file) => file.endsWith('.graphql') && file !== 'fragments.graphql')
    .sort()
    .map((file) => {
      const document = withFragments(parse(readFileSync(join(ROOT, folder, file), 'utf8')), fragments)
      const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION)!
      return {
        name: `${folder}/${file.replace(/\.graphql$/, '')}`,
        document,
        kind: operation.operation,
        source: print(document),
      }
    })
}
