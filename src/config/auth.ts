/**
 * Tokens from an identity provider (decision 0274): where its keys are, what a token must say, and
 * which claims name the user. HS256 tokens signed with AUTH_SECRET keep Parley's own claims
 * (`sub`, `name`, `role: "operator"`) and none of this applies to them.
 */

/** A claim that grants something: equal to `value`, or an array holding it; with no `value`, present and not false or empty. */
export type ClaimTest = { claim: string; value: string | null }

/** Which claims of a provider's token give the handle, the display name, operator rights and the AGENT kind. */
export type ClaimMapping = { handle: string; name: string; operator: ClaimTest; agent: ClaimTest | null }

export type TokenProvider = {
  /** The key set's URL; null: the `jwks_uri` of `<issuer>/.well-known/openid-configuration`. */
  jwksUrl: URL | null
  /** `iss` must equal it when set. */
  issuer: string | null
  /** `aud` must hold one of them when set. */
  audience: string[] | null
  clockToleranceS: number
  claims: ClaimMapping
  /** Seconds after a fetch before an unknown `kid` may fetch the key set again (jose's cooldown). */
  jwksCooldownS: number
  /** Seconds a fetched key set is used before it is fetched again (jose's cacheMaxAge). */
  jwksMaxAgeS: number
}

/** jose's defaults: a flood of unknown `kid`s costs the provider one request per 30 s; keys are refreshed every 10 minutes. */
const JWKS_COOLDOWN_S = 30
const JWKS_MAX_AGE_S = 600

type AuthEnv = {
  AUTH_JWKS_URL?: string | undefined
  AUTH_ISSUER?: string | undefined
  AUTH_AUDIENCE?: string | undefined
  AUTH_CLOCK_TOLERANCE_S: number
  AUTH_HANDLE_CLAIM: string
  AUTH_NAME_CLAIM: string
  AUTH_OPERATOR_CLAIM: string
  AUTH_OPERATOR_VALUE: string
  AUTH_AGENT_CLAIM?: string | undefined
  AUTH_AGENT_VALUE?: string | undefined
}

/** What is wrong with the provider's variables, by variable (none: they fit together). */
export function tokenProviderProblems(env: AuthEnv): [variable: string, problem: string][] {
  const problems: [string, string][] = []
  // The audience is checked on the provider's tokens only: an HS256-only setup that set it would believe it checked.
  if (env.AUTH_AUDIENCE && !env.AUTH_JWKS_URL && !env.AUTH_ISSUER)
    problems.push(['AUTH_AUDIENCE', 'needs AUTH_JWKS_URL or AUTH_ISSUER (it applies to their tokens)'])
  if (env.AUTH_AGENT_VALUE && !env.AUTH_AGENT_CLAIM) problems.push(['AUTH_AGENT_VALUE', 'needs AUTH_AGENT_CLAIM'])
  for (const variable of ['AUTH_JWKS_URL', 'AUTH_ISSUER'] as const) {
    const url = env[variable]
    if (url && URL.canParse(url) && !isTrustedKeyUrl(new URL(url)))
      problems.push([variable, 'must be https (plain http only on loopback): the keys decide who may sign in'])
  }
  return problems
}

/** Keys fetched over plain http could be replaced on the way; loopback (a sidecar, the tests) cannot. */
export function isTrustedKeyUrl(url: URL): boolean {
  if (url.protocol === 'https:') return true
  return url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
}

/** The provider the environment names, or null (HS256 only). */
export function parseTokenProvider(env: AuthEnv): TokenProvider | null {
  if (!env.AUTH_JWKS_URL && !env.AUTH_ISSUER) return null
  const audience = env.AUTH_AUDIENCE?.split(',')
    .map((a) => a.trim())
    .filter(Boolean)
  return {
    jwksUrl: env.AUTH_JWKS_URL ? new URL(env.AUTH_JWKS_URL) : null,
    issuer: env.AUTH_ISSUER ?? null,
    audience: audience?.length ? audience : null,
    clockToleranceS: env.AUTH_CLOCK_TOLERANCE_S,
    claims: {
      handle: env.AUTH_HANDLE_CLAIM,
      name: env.AUTH_NAME_CLAIM,
      operator: { claim: env.AUTH_OPERATOR_CLAIM, value: env.AUTH_OPERATOR_VALUE },
      agent: env.AUTH_AGENT_CLAIM ? { claim: env.AUTH_AGENT_CLAIM, value: env.AUTH_AGENT_VALUE ?? null } : null,
    },
    jwksCooldownS: JWKS_COOLDOWN_S,
    jwksMaxAgeS: JWKS_MAX_AGE_S,
  }
}

/** Browser origins allowed to call the API: every origin (reflected), or a list (none: no cross-origin access). */
export type CorsOrigins = '*' | string[]

/**
 * CORS_ORIGINS: `*`, or comma-separated origins (`https://chat.example.com`). Unset: `*` in
 * development (as before), none in production until configured.
 */
export function parseCorsOrigins(text: string | undefined, production: boolean): CorsOrigins {
  const spec = text?.trim()
  if (!spec) return production ? [] : '*'
  if (spec === '*') return '*'
  return spec.split(',').map((entry) => {
    const origin = entry.trim().replace(/\/$/, '')
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {
      // Reported below.
    }
    if (!parsed || parsed.origin !== origin)
      throw new Error(`${JSON.stringify(entry.trim())} is not an origin such as https://chat.example.com`)
    return origin
  })
}
