import { createClient, type Client } from 'graphql-ws'
import WebSocket from 'ws'

/** A graphql-ws client that hands every `next` payload of one subscription to `onEvent`. */
export function subscribe(
  wsUrl: string,
  token: string,
  query: string,
  variables: Record<string, unknown>,
  onEvent: (data: any) => void,
): { client: Client; done: Promise<void> } {
  const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0, connectionParams: { authorization: `Bearer ${token}` } })
  const done = new Promise<void>((resolve, reject) => {
    client.subscribe({ query, variables }, { next: (r) => (r.errors ? reject(new Error(JSON.stringify(r.errors))) : onEvent(r.data)), error: reject, complete: resolve })
  })
  done.catch(() => {})
  return { client, done }
}
