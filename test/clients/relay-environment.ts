import { createClient } from 'graphql-ws'
import {
  Environment,
  Network,
  Observable,
  RecordSource,
  Store,
  type GraphQLResponse,
  type RequestParameters,
  type Variables,
} from 'relay-runtime'
import WebSocket from 'ws'

/** A Relay environment against Parley: queries and mutations over HTTP, subscriptions over graphql-ws. */
export function createRelayEnvironment(opts: { httpUrl: string; wsUrl: string; token: string }) {
  const authorization = `Bearer ${opts.token}`
  // In a browser, leave out webSocketImpl: graphql-ws uses the global WebSocket.
  const ws = createClient({ url: opts.wsUrl, connectionParams: { authorization }, webSocketImpl: WebSocket })
  const fetchFn = async (params: RequestParameters, variables: Variables): Promise<GraphQLResponse> => {
    const response = await fetch(opts.httpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ query: params.text, operationName: params.name, variables }),
    })
    return (await response.json()) as GraphQLResponse
  }
  const subscribeFn = (params: RequestParameters, variables: Variables) =>
    Observable.create<GraphQLResponse>((sink) =>
      ws.subscribe({ query: params.text!, operationName: params.name, variables }, sink as never),
    )
  return {
    environment: new Environment({
      network: Network.create(fetchFn, subscribeFn),
      store: new Store(new RecordSource()),
    }),
    close: () => ws.dispose(),
  }
}
