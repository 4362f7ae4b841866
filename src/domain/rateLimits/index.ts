// Rate limits per tier, shared between instances through Redis when configured.
export { callerOf, createRateLimits, tierOf } from './rateLimits.ts'
