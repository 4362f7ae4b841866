// Live cards: updates by their sender, and the members' presses of their buttons.
export { pressCardAction, updateCard } from './cards.ts'
