import type { JWTPayload } from 'jose'
import type { ClaimMapping, ClaimTest } from '../../config/auth.ts'
import { DomainError, type Identity } from '../../domain/core/index.ts'
import { isStorable } from '../plugins/useInputHygiene.ts'

/** A refused token: UNAUTHENTICATED (HTTP 401) with a reason safe to show; never the token. */
export const unauthenticated = (reason: string) => new DomainError('UNAUTHENTICATED', reason, { http: { status: 401 } })

/** A verified token's identity, and when it stops being accepted (ms; Infinity without exp). */
export type Verified = { identity: Identity; expiresAt: number }

const HANDLE_LENGTH = 128

/** Stored as the user's handle on first sight: PostgreSQL must be able to hold it. */
export function checkedHandle(value: unknown, claim: string): string {
  // An employee number may come as a JSON number.
  const handle = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value
  if (typeof handle !== 'string' || !handle || handle.length > HANDLE_LENGTH || !isStorable(handle))
    throw unauthenticated(`the token's ${claim} claim is not a usable handle`)
  return handle
}

/** The display name for a user's first appearance, cut at 128 UTF-16 units, never inside a surrogate pair. */
export function checkedName(value: unknown, claim: string): string | null {
  if (typeof value !== 'string') return null
  if (!isStorable(value)) throw unauthenticated(`the token's ${claim} claim cannot be stored`)
  return value.slice(0, 128).replace(/[\ud800-\udbff]$/, '')
}

/**
 * A claim by name, else by a dotted path into nested objects: Keycloak's realm roles are
 * `realm_access.roles`, while Auth0's namespaced claims are URLs whose dots belong to the name.
 */
function claimAt(payload: JWTPayload, name: string): unknown {
  if (Object.hasOwn(payload, name)) return payload[name]
  let value: unknown = payload
  for (const part of name.split('.')) {
    // Own keys only: a claim named like an Object.prototype member is absent, not a function.
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, part)) return undefined
    value = (value as Record<string, unknown>)[part]
  }
  return value
}

function holds(value: unknown, test: ClaimTest): boolean {
  if (test.value === null)
    return value !== undefined && value !== null && value !== false && value !== '' && !isEmptyArray(value)
  if (Array.isArray(value)) return value.some((item) => item === test.value)
  return (
    (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') &&
    String(value) === test.value
  )
}

const isEmptyArray = (value: unknown) => Array.isArray(value) && value.length === 0

/** A provider token's identity through the configured claim mapping (README "Authentication"). */
export function mappedIdentity(payload: JWTPayload, claims: ClaimMapping): Identity {
  return {
    handle: checkedHandle(claimAt(payload, claims.handle), claims.handle),
    name: checkedName(claimAt(payload, claims.name), claims.name),
    isOperator: holds(claimAt(payload, claims.operator.claim), claims.operator),
    kind: claims.agent && holds(claimAt(payload, claims.agent.claim), claims.agent) ? 'AGENT' : 'HUMAN',
  }
}
