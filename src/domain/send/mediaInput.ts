import { badInput } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'

/** Media inputs name their file by a url or by an attachment the sender uploaded (issue 40). */

/** Members whose file is a url or an attachment (domain/files attachToContent fills the latter in). */
export const MEDIA = new Set(['image', 'audio', 'video', 'file'])

/** What a media input needs besides its url when it names no attachment (v1's required fields). */
const NEEDED_WITH_URL: Partial<Record<string, string[]>> = {
  audio: ['durationMs'],
  video: ['durationMs'],
  file: ['name', 'sizeBytes'],
}

/** Exactly one of url and attachmentId; an attachment id is parsed to its number here. */
export function checkMediaSource(member: string, content: Record<string, unknown>): void {
  if ('url' in content === 'attachmentId' in content)
    throw badInput(`content.${member} must set exactly one of url and attachmentId`, `content.${member}`)
  if ('attachmentId' in content) {
    content.attachmentId = parseId(content.attachmentId as string, 'Attachment')
    return
  }
  for (const field of NEEDED_WITH_URL[member] ?? [])
    if (!(field in content))
      throw badInput(`content.${member}.${field} is required with a url`, `content.${member}.${field}`)
}
