import type { PreviewFragment } from './gql/graphql.ts'

/** One line for a message: its text, or its kind in brackets (the list's preview, a quote, an alert). */
export function previewOf(message: Pick<PreviewFragment, 'status' | 'content'> | null | undefined): string {
  if (!message) return ''
  if (message.status === 'RECALLED' || !message.content) return '[recalled]'
  const c = message.content
  switch (c.__typename) {
    case 'TextContent':
    case 'SystemContent':
      return c.text
    case 'ImageContent':
      return '[image]'
    case 'FileContent':
      return `[file] ${c.name}`
    case 'StickerContent':
      return `[sticker] ${c.label ?? ''}`
    case 'ForwardContent':
      return `[forward] ${c.title}`
    case 'CardContent':
      return `[card] ${c.cardType}`
    case 'MaterialContent':
      return `[article] ${c.title}`
    case 'AudioContent':
      return '[voice]'
    case 'VideoContent':
      return '[video]'
  }
}

export const time = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
