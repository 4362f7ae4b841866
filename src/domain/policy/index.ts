// Who may do what: access to a conversation and the rules of sending, managing and seeing (one module, policy.ts).
export { requireMember } from './access.ts'
export {
  isRecalled,
  requireMemberOrOperator,
  shownContent,
  shownEdits,
  shownViewerState,
  viewerMembership,
} from './policy.ts'
