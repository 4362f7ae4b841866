import type { MessageKind } from '../../store/records.ts'
import type { ForwardedItemRecord } from './content.ts'

const strings = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : typeof value === 'object' && value !== null
      ? Object.values(value).flatMap(strings)
      : []

/**
 * The human-readable text of stored content, which the sensitive-word filter reads: text, file
 * names, sticker labels, material title and digest, the card type and every string inside card data, and a
 * forward's title and items. URLs, ids and MIME types are not read (they would match by accident).
 */
export function readableText(kind: MessageKind, content: unknown): string[] {
  const c = (content ?? {}) as Record<string, unknown>
  const pick = (...keys: string[]) => keys.map((k) => c[k]).filter((v): v is string => typeof v === 'string')
  switch (kind) {
    case 'TEXT':
      return pick('text')
    case 'FILE':
      return pick('name')
    case 'STICKER':
      return pick('label')
    case 'MATERIAL':
      return pick('title', 'digest')
    case 'CARD':
      return [...pick('cardType'), ...strings(c.data)]
    case 'FORWARD':
      return [
        ...pick('title'),
        ...((c.items ?? []) as ForwardedItemRecord[]).flatMap((i) => readableText(i.kind, i.content)),
      ]
    default:
      return []
  }
}
