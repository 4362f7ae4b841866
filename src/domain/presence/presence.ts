import DataLoader from 'dataloader'
import type { App, Viewer } from '../core/app.ts'
import { findPresenceFacts, isPresenceVisible, setPresenceVisible as storeVisible } from '../../store/presence.ts'
import type { PresenceTracker } from './tracker.ts'

/** What presence asks of the App: this instance's tracker. */
export type PresenceApp = App & { presence: PresenceTracker }

/** User.presence: online, or offline since lastSeenAt (null while online). */
export type Presence = { online: boolean; lastSeenAt: Date | null }

const loaders = new WeakMap<object, DataLoader<number, Presence | null>>()

/**
 * User.presence as the viewer may see it: null when the user hides it or shares no conversation
 * with the viewer (the viewer's own is always shown). One read and one registry lookup for every
 * user of a request (`request`: an object that lives as long as the request, its loaders).
 */
export function loadPresence(
  app: PresenceApp,
  viewer: Viewer,
  request: object,
  userId: number,
): Promise<Presence | null> {
  let loader = loaders.get(request)
  if (!loader) {
    loader = new DataLoader(async (ids) => {
      const facts = new Map((await findPresenceFacts(app.db, viewer.userId, ids)).map((f) => [f.userId, f]))
      const shown = ids.filter((id) => {
        const f = facts.get(id)
        return f && f.sharesConversation && (f.visible || id === viewer.userId)
      })
      const online = await app.presence.onlineAmong(shown)
      return ids.map((id) =>
        shown.includes(id)
          ? { online: online.has(id), lastSeenAt: online.has(id) ? null : facts.get(id)!.lastSeenAt }
          : null,
      )
    })
    loaders.set(request, loader)
  }
  return loader.load(userId)
}

/** Viewer.presenceVisible: true until the viewer hides their presence. */
export const viewerPresenceVisible = (app: App, viewer: Viewer) => isPresenceVisible(app.db, viewer.userId)

/**
 * setPresenceVisible: false hides the viewer's presence from everyone (User.presence null, no
 * PresenceEvents); the viewer still sees others'. Returns the viewer.
 */
export async function setPresenceVisible(app: App, viewer: Viewer, visible: boolean): Promise<Viewer> {
  await storeVisible(app.db, viewer.userId, visible)
  return viewer
}
