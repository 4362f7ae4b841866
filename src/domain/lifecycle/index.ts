// A message after it is sent: edit, recall, delete-for-me, favourites and reminders.
export { editMessage, recallMessage } from './lifecycle.ts'
export { startReminderScheduler } from './reminders.ts'
export {
  deleteMessagesForMe,
  listFavorites,
  listReminders,
  restoreMessagesForMe,
  setFavorite,
  setReminder,
} from './userActions.ts'
