// The few GraphQL calls the example agent makes, over plain fetch (any GraphQL client would do).

export type Parley = <T>(query: string, variables?: Record<string, unknown>) => Promise<T>

/** A caller of Parley's GraphQL endpoint as the user whose token this is; a response with errors throws. */
export function connect(url: string, token: string): Parley {
  return async (query, variables) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    })
    const body = (await response.json()) as { data?: unknown; errors?: { message: string }[] }
    if (body.errors?.length) throw new Error(`Parley: ${body.errors.map((e) => e.message).join('; ')}`)
    return body.data as never
  }
}

export const VIEWER = `query { viewer { user { id handle kind } } }`

export const CREATE_WEBHOOK = `mutation ($url: String!) {
  createWebhook(input: { url: $url, events: [MESSAGE_ADDED, CARD_ACTION], scope: VIEWER }) { secret webhook { id } }
}`

export const DELETE_WEBHOOK = `mutation ($id: ID!) { deleteWebhook(id: $id) }`

export const SEND_TYPING = `mutation ($conversationId: ID!, $status: String) {
  sendTyping(conversationId: $conversationId, status: $status)
}`

export const START_STREAM = `mutation ($conversationId: ID!, $clientMessageId: String!, $quotedMessageId: ID) {
  startStreamingMessage(conversationId: $conversationId, clientMessageId: $clientMessageId, quotedMessageId: $quotedMessageId) {
    deduplicated message { id }
  }
}`

export const APPEND = `mutation ($messageId: ID!, $sequence: Int!, $delta: String!) {
  appendToStreamingMessage(messageId: $messageId, sequence: $sequence, delta: $delta)
}`

export const FINISH = `mutation ($messageId: ID!) { finishStreamingMessage(messageId: $messageId) { id } }`

export const SEND_CARD = `mutation ($input: SendMessageInput!) { sendMessage(input: $input) { message { id } } }`

export const READ_CARD = `query ($id: ID!) { node(id: $id) { ... on Message { content { ... on CardContent { data } } } } }`

export const UPDATE_CARD = `mutation ($messageId: ID!, $data: JSON!) {
  updateCard(messageId: $messageId, data: $data, actions: []) { id }
}`
