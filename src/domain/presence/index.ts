// Presence: who holds a live subscription on any instance, last seen, and who may see it.
export { loadPresence, setPresenceVisible, viewerPresenceVisible } from './presence.ts'
export type { Presence, PresenceApp } from './presence.ts'
export { PresenceTracker } from './tracker.ts'
