import { badInput } from '../core/errors.ts'

/**
 * A reaction's emoji: one emoji grapheme by Unicode's own data (Intl.Segmenter for the grapheme,
 * the RGI_Emoji property of strings for "is an emoji"), or a :shortcode: for custom ones.
 */
const GRAPHEMES = new Intl.Segmenter('en', { granularity: 'grapheme' })
// The `v` flag (properties of strings) is past the compile target's syntax; Node 20 runs it.
const RGI_EMOJI = new RegExp('^\\p{RGI_Emoji}$', 'v')
const PICTOGRAPH = /^\p{Extended_Pictographic}$/u
const SHORTCODE = /^:[a-z0-9_+-]{1,32}:$/

/**
 * The emoji as stored, else BAD_USER_INPUT. A pictograph typed in its text form ("❤" without
 * U+FE0F) is stored in its emoji form, so both spellings count as one reaction.
 */
export function parseEmoji(input: string): string {
  if (SHORTCODE.test(input)) return input
  if (input.length <= 64 && [...GRAPHEMES.segment(input)].length === 1) {
    if (RGI_EMOJI.test(input)) return input
    if (PICTOGRAPH.test(input) && RGI_EMOJI.test(`${input}\uFE0F`)) return `${input}\uFE0F`
  }
  throw badInput('emoji must be one emoji, or a :shortcode: of 1..32 characters a-z 0-9 _ + -', 'emoji')
}
