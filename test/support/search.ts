import { graphql } from '../gql/index.ts'

/** Operations shared by the search tests. */

export const Search = graphql(`
  query SearchMessages($query: String!, $filter: MessageSearchFilter, $first: Int, $after: String) {
    searchMessages(query: $query, filter: $filter, first: $first, after: $after) {
      edges {
        cursor
        snippet
        highlights {
          start
          length
        }
        node {
          id
          seq
          conversationId
          kind
        }
      }
      pageInfo {
        hasNextPage
        hasPreviousPage
        endCursor
      }
    }
  }
`)
