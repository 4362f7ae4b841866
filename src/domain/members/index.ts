// Conversations and who is in them: creating, membership and roles, per-member settings, moderation, users, the operators' view.
export { adminMessages } from './admin.ts'
export { saveDraft, updateConversationSettings } from './conversationSettings.ts'
export {
  createChannel,
  createGroup,
  openPrivateConversation,
  setConversationTitle,
  setPostingPolicy,
} from './conversations.ts'
export {
  addGroupMembers,
  leaveConversation,
  removeGroupMember,
  setMemberRole,
  subscribeChannel,
  unsubscribeChannel,
} from './membership.ts'
export { blockUser, muteMember, unblockUser } from './moderation.ts'
export { createViewerResolver, upsertUsers } from './users.ts'
