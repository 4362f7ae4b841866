import { builder } from './builder.ts'

export const UserKindEnum = builder.enumType('UserKind', { values: ['HUMAN', 'AGENT'] as const })
export const ConversationTypeEnum = builder.enumType('ConversationType', {
  values: ['PRIVATE', 'GROUP', 'CHANNEL'] as const,
})
export const HistoryVisibilityEnum = builder.enumType('HistoryVisibility', {
  values: ['SHARED', 'JOINED'] as const,
  description: 'JOINED: a member sees only messages sent after joining',
})
export const MemberRoleEnum = builder.enumType('MemberRole', {
  values: ['OWNER', 'ADMIN', 'MEMBER', 'SUBSCRIBER'] as const,
})
export const SenderTypeEnum = builder.enumType('SenderType', { values: ['USER', 'AGENT', 'SYSTEM'] as const })
export const MessageStatusEnum = builder.enumType('MessageStatus', {
  values: ['NORMAL', 'EDITED', 'RECALLED', 'STREAMING', 'REMOVED'] as const,
})
export const MessageKindEnum = builder.enumType('MessageKind', {
  values: ['TEXT', 'IMAGE', 'AUDIO', 'VIDEO', 'FILE', 'STICKER', 'CARD', 'FORWARD', 'MATERIAL', 'SYSTEM'] as const,
})

export const PostingPolicyEnum = builder.enumType('PostingPolicy', {
  values: ['EVERYONE', 'ADMINS'] as const,
  description: 'ADMINS: only the OWNER and ADMINs send (an announcement group); others are FORBIDDEN',
})
export const CardActionStyleEnum = builder.enumType('CardActionStyle', {
  values: ['DEFAULT', 'PRIMARY', 'DANGER'] as const,
})
