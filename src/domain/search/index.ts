// Search: the documents written beside messages, queries over them, and snippets.
export { memberSearch, searchMessages, searchUsers } from './search.ts'
export type { MessageSearchConnection, MessageSearchEdge } from './search.ts'
export type { TextRange } from './snippet.ts'
