// Conversations and who is in them: creating, membership and roles, per-member settings, moderation, users, the operators' view.
export { adminMessages } from './admin.ts'
export { saveDraft, updateConversationSettings } from './conversationSettings.ts'
export {
  addGroupMembers,
  createChannel,
  createGroup,
  leaveConversation,
  openPrivateConversation,
  removeGroupMember,
  setConversationTitle,
  setMemberRole,
  subscribeChannel,
  unsubscribeChannel,
} from './conversations.ts'
export { blockUser, muteMember, unblockUser } from './moderation.ts'
export { createViewerResolver, upsertUsers } from './users.ts'
