// Pins, reactions and saved stickers.
export { setPinned } from './pins.ts'
export { listReactionUsers, setReaction } from './reactions.ts'
export { listSavedStickers, removeSticker, requireSticker, saveSticker } from './stickers.ts'
