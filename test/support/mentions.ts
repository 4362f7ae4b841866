import { graphql } from '../gql/index.ts'

/** Operations of mention ranges (test/send/mention-ranges.test.ts). */

graphql(`
  fragment RangedMessage on Message {
    id
    seq
    mentionsAll
    mentions {
      id
    }
    content {
      ... on TextContent {
        text
        mentionRanges {
          start
          length
          all
          user {
            id
          }
        }
      }
    }
  }
`)

export const SendRanged = graphql(`
  mutation SendRanged($input: SendMessageInput!) {
    sendMessage(input: $input) {
      message {
        ...RangedMessage
      }
    }
  }
`)

export const EditRanged = graphql(`
  mutation EditRanged($messageId: ID!, $text: TextInput!) {
    editMessage(messageId: $messageId, content: { text: $text }) {
      ...RangedMessage
    }
  }
`)

export const ReadRanged = graphql(`
  query ReadRanged($id: ID!, $seq: SafeInt!) {
    conversation(id: $id) {
      message(seq: $seq) {
        ...RangedMessage
      }
    }
  }
`)
