import type { FieldNode, FragmentDefinitionNode } from 'graphql'
import type { PageFields } from '../domain/history/index.ts'
import { fieldNamesBelow } from './lookahead.ts'

/** What a page of messages selected by `nodes` will show of its optional reads (domain/history/history.ts PageFields). */
export function pageFields(fragments: Record<string, FragmentDefinitionNode>, nodes: readonly FieldNode[]): PageFields {
  const names = fieldNamesBelow(fragments, nodes)
  return {
    quoted: names.has('quoted'),
    hasNextPage: names.has('hasNextPage'),
    hasPreviousPage: names.has('hasPreviousPage'),
  }
}
