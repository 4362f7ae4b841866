import {
  Kind,
  TypeInfo,
  visit,
  type DefinitionNode,
  type FragmentDefinitionNode,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql'

/**
 * Whether a live event's result may be shared by every subscriber of the event with the same view
 * (decision 0271): the operation selects only fields whose values are the same for every member who
 * receives the event, besides `MessageEvent.alert`, which the view carries (domain/live's
 * `Delivery.view`). Anything that depends on the viewer (`mentionsViewer`, `viewerState`,
 * reactions' `viewerReacted`, a quote's visibility, the conversation's per-viewer fields, receipts)
 * is not listed, so an operation that selects it executes per subscriber as before.
 */
const SAME_FOR_EVERY_MEMBER: Record<string, ReadonlySet<string>> = {
  Subscription: new Set(['conversationEvents', 'inboxEvents']),
  MessageEvent: new Set(['kind', 'pts', 'message', 'cursor', 'alert']),
  ReadEvent: new Set(['conversationId', 'user', 'lastReadSeq']),
  TypingEvent: new Set(['conversationId', 'user', 'expiresAt', 'status']),
  MessageStreamEvent: new Set(['conversationId', 'messageId', 'sequence', 'delta', 'text']),
  SignalEvent: new Set(['conversationId', 'from', 'type', 'payload', 'sentAt']),
  Message: new Set([
    'id',
    'conversationId',
    'conversation',
    'seq',
    'pts',
    'senderType',
    'sender',
    'kind',
    'content',
    'clientMessageId',
    'mentions',
    'mentionsAll',
    'status',
    'sentAt',
    'editedAt',
    'recalledAt',
    'recalledBy',
    'forwardedFrom',
    'edits',
  ]),
  Conversation: new Set([
    'id',
    'type',
    'title',
    'historyVisibility',
    'postingPolicy',
    'createdAt',
    'lastSeq',
    'lastPts',
    'lastActivityAt',
  ]),
  User: new Set(['id', 'handle', 'displayName', 'kind']),
}
/** Fields below which everything is a function of the message alone (its content, a copy's origin, its edits). */
const MESSAGE_ONLY = new Set(['Message.content', 'Message.forwardedFrom', 'Message.edits'])
/** Events that come on the viewer's own topic only: each is the viewer's alone and never shared, whatever it selects. */
const VIEWERS_OWN = new Set([
  'ConversationJoinedEvent',
  'ReminderDueEvent',
  'MessageActionEvent',
  'ConversationUpdatedEvent',
  'ConversationRemovedEvent',
])
/** Fields below a MESSAGE_ONLY field that still depend on the viewer (their own choice on a card). */
const VIEWERS_EVEN_BELOW = new Set(['CardContent.viewerActionId'])
/** Whether nothing selected below this field can make a shared event differ between members. */
const settled = (parent: string, field: string) => VIEWERS_OWN.has(parent) || MESSAGE_ONLY.has(`${parent}.${field}`)

/**
 * The operation with each named fragment spread replaced by its selection, so the fields a client
 * selects through fragments are checked, and under the field they are spread in.
 */
function withFragmentsInlined(operation: OperationDefinitionNode, definitions: readonly DefinitionNode[]) {
  const fragments = new Map(
    definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((f) => [f.name.value, f]),
  )
  // A node returned on enter is visited in turn, so spreads inside a fragment are inlined too.
  return visit(operation, {
    FragmentSpread(node) {
      const fragment = fragments.get(node.name.value)
      return fragment
        ? { kind: Kind.INLINE_FRAGMENT, typeCondition: fragment.typeCondition, selectionSet: fragment.selectionSet }
        : node
    },
  })
}

/**
 * True when every field `operation` selects, its fragments' (`definitions`, the document's) included,
 * is the same for every member who receives an event.
 */
export function sameForEveryMember(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  definitions: readonly DefinitionNode[] = [],
): boolean {
  const typeInfo = new TypeInfo(schema)
  let shared = true
  let settledDepth = 0
  const document: DocumentNode = {
    kind: Kind.DOCUMENT,
    definitions: [withFragmentsInlined(operation, definitions)],
  }
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field: {
        enter(node) {
          const parent = typeInfo.getParentType()
          const name = node.name.value
          if (parent && VIEWERS_EVEN_BELOW.has(`${parent.name}.${name}`)) shared = false
          else if (parent && settled(parent.name, name)) settledDepth++
          else if (
            parent &&
            name !== '__typename' &&
            settledDepth === 0 &&
            !SAME_FOR_EVERY_MEMBER[parent.name]?.has(name)
          )
            shared = false
        },
        leave(node) {
          const parent = typeInfo.getParentType()
          if (parent && settled(parent.name, node.name.value)) settledDepth--
        },
      },
    }),
  )
  return shared
}
