import type { DocumentNode, ValidationRule } from 'graphql'
import type { Plugin } from 'graphql-yoga'

/** Rule lists seen; envelop copies the list per request, so they are told apart by their members. */
const MAX_RULE_LISTS = 8

/**
 * Caches graphql-js validation per document, as Yoga's own cache does (its validationCache is off in
 * http/yoga.ts), without Yoga's key: the names of every rule joined into a string on every request, about
 * 1.5 % of the server CPU of a `{ __typename }`. Rules are compared by identity instead. One schema
 * is served, so the schema is no part of the key.
 */
export function useValidationCache(): Plugin {
  const byRules: { rules: readonly ValidationRule[] | undefined; results: WeakMap<DocumentNode, readonly Error[]> }[] =
    []
  const same = (a: readonly ValidationRule[] | undefined, b: readonly ValidationRule[] | undefined) =>
    a === b || (a !== undefined && b !== undefined && a.length === b.length && a.every((rule, i) => rule === b[i]))
  const resultsFor = (rules: readonly ValidationRule[] | undefined) => {
    let entry = byRules.find((e) => same(e.rules, rules))
    if (!entry && byRules.length < MAX_RULE_LISTS)
      byRules.push((entry = { rules: rules && [...rules], results: new WeakMap() }))
    return entry?.results
  }
  return {
    onValidate({ params: { documentAST, rules }, setResult }) {
      const results = resultsFor(rules)
      const cached = results?.get(documentAST)
      if (cached) return setResult(cached)
      return ({ result }) => void results?.set(documentAST, result)
    },
  }
}
