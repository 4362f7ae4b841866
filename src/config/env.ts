import { availableParallelism } from 'node:os'
import { isIP } from 'node:net'
import { z } from 'zod'
import { parseCorsOrigins, parseTokenProvider, tokenProviderProblems } from './auth.ts'
import { parseRateLimits } from './rateLimits.ts'

/** A problem the operator fixes by configuration: main.ts prints its message as one line and exits 1. */
export class StartupError extends Error {
  override name = 'StartupError'
}

/**
 * One line, no stack, for start-up and the npm scripts: a StartupError says what to set; anything else
 * is shown by its message (LOG_LEVEL=debug adds the stack for a bug hunt).
 */
export function reportFailure(what: string, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error)
  console.error(`[parley] ${what}: ${message.replace(/\s+/g, ' ').trim().slice(0, 1000)}`)
  if (!(error instanceof StartupError) && process.env.LOG_LEVEL === 'debug') console.error(error)
}

const FLAG_VALUES = ['true', 'false', '1', '0', 'on', 'off'] as const
const booleanFlag = z
  .enum(FLAG_VALUES, { error: `must be one of ${FLAG_VALUES.join(', ')}` })
  .transform((v) => ['true', '1', 'on'].includes(v))

/** A whole number in [min, max]; every way to miss says the same, with the range. */
function wholeNumber(min: number, max?: number) {
  const error = `must be a whole number ${max === undefined ? `of at least ${min}` : `from ${min} to ${max}`}`
  const number = z.coerce.number({ error }).int({ error }).min(min, { error })
  return max === undefined ? number : number.max(max, { error })
}

/**
 * Longer than the idle timeout of the load balancers Parley runs behind (AWS's 60 s, nginx's upstream
 * keepalive_timeout 60 s): the balancer, not Parley, closes an idle connection first. With Node's 5 s
 * default a balancer can send a request on a connection Parley is closing, and answers it 502.
 */
export const DEFAULT_KEEP_ALIVE_MS = 65_000

/** "10.0.0.0/8", "fd00::/8" or one address. */
function isNetwork(text: string): boolean {
  const [address = '', prefix, ...rest] = text.split('/')
  const family = isIP(address)
  if (!family || rest.length) return false
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
}

/** Every environment variable Parley reads, validated once at start-up (documented in README.md). */
const Env = z
  .object({
    NODE_ENV: z.string().default('development'),
    PORT: wholeNumber(0, 65535).default(4000),
    HOST: z.string().default('0.0.0.0'),
    WORKERS: z
      .string()
      .default('1')
      .transform((value, ctx) => {
        if (value === 'auto') return availableParallelism()
        const count = Number(value)
        if (Number.isInteger(count) && count >= 1 && count <= 256) return count
        ctx.addIssue({ code: 'custom', message: 'must be auto (one per CPU) or a whole number from 1 to 256' })
        return z.NEVER
      }),
    DATABASE_URL: z.url({ error: 'must be a URL such as postgresql://user:password@localhost:5432/parley' }).optional(),
    DATA_DIR: z.string().default('.data'),
    EMBEDDED_PG_PORT: wholeNumber(1, 65535).default(54329),
    DATABASE_POOL_SIZE: wholeNumber(1, 500).default(20),
    DATABASE_POOL_TIMEOUT_MS: wholeNumber(1).default(10_000),
    // Standbys of DATABASE_URL that history, search, sync, the inbox and operators' reads may use (decision 0288).
    DATABASE_REPLICA_URLS: z
      .string()
      .default('')
      .transform((v) =>
        v
          .split(',')
          .map((url) => url.trim())
          .filter(Boolean),
      )
      .refine((urls) => urls.every((url) => URL.canParse(url) && /^postgres(ql)?:$/.test(new URL(url).protocol)), {
        error: 'must be PostgreSQL URLs separated by commas',
      }),
    REPLICA_MAX_LAG_MS: wholeNumber(40).default(1_000),
    AUTH_SECRET: z
      .string()
      .min(32, { error: 'must be at least 32 characters (for example: openssl rand -base64 32)' })
      .optional(),
    AUTH_JWKS_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL of a JSON Web Key Set' }).optional(),
    AUTH_ISSUER: z
      .url({ protocol: /^https?$/, error: "must be the provider's issuer URL, as in its tokens' iss" })
      .optional(),
    AUTH_AUDIENCE: z.string().optional(),
    AUTH_CLOCK_TOLERANCE_S: wholeNumber(0, 300).default(30),
    AUTH_HANDLE_CLAIM: z.string().min(1).default('sub'),
    AUTH_NAME_CLAIM: z.string().min(1).default('name'),
    AUTH_OPERATOR_CLAIM: z.string().min(1).default('role'),
    AUTH_OPERATOR_VALUE: z.string().min(1).default('operator'),
    AUTH_AGENT_CLAIM: z.string().min(1).optional(),
    AUTH_AGENT_VALUE: z.string().min(1).optional(),
    CORS_ORIGINS: z.string().optional(),
    MAX_BODY_BYTES: wholeNumber(1024).default(1_000_000),
    LOG_LEVEL: z
      .enum(['debug', 'info', 'warn', 'error'], { error: 'must be one of debug, info, warn, error' })
      .default('info'),
    RECALL_WINDOW_SECONDS: wholeNumber(0).default(120),
    RETENTION_SECONDS: wholeNumber(1).optional(),
    RETENTION_MIN_SECONDS: wholeNumber(0).default(86_400),
    RETENTION_SWEEP_INTERVAL_MS: wholeNumber(100).default(60_000),
    READ_RECEIPTS_PRIVATE: booleanFlag.default(true),
    READ_RECEIPTS_GROUP: booleanFlag.default(true),
    PRIVATE_CHAT_POLICY: z.enum(['open', 'friends']).default('open'),
    SENSITIVE_WORDS_FILE: z.string().optional(),
    REDIS_URL: z.string().optional(),
    RESYNC_LIMIT: wholeNumber(1).default(1000),
    SEND_COALESCING: booleanFlag.default(true),
    PINNED_MESSAGES_LIMIT: wholeNumber(1, 1000).default(10),
    REACTION_EMOJI_LIMIT: wholeNumber(1, 1000).default(20),
    REACTIONS_PER_USER_LIMIT: wholeNumber(1, 1000).default(3),
    PINNED_CONVERSATIONS_LIMIT: wholeNumber(0, 1000).default(5),
    METRICS: booleanFlag.default(false),
    // The chat workbench at / (web/): always outside production, in production only when asked for.
    WEB_APP: booleanFlag.optional(),
    METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
    // Traces go out over OTLP/HTTP when either endpoint is set; the exporter reads the standard
    // OTEL_EXPORTER_OTLP_* variables itself (headers, timeouts).
    OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ error: 'must be a URL such as http://localhost:4318' }).optional(),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z
      .url({ error: 'must be a URL such as http://localhost:4318/v1/traces' })
      .optional(),
    OTEL_SERVICE_NAME: z.string().min(1).default('parley'),
    TRUST_PROXY: booleanFlag.default(false),
    SHUTDOWN_GRACE_MS: wholeNumber(0).default(10_000),
    HTTP_KEEP_ALIVE_MS: wholeNumber(1).default(DEFAULT_KEEP_ALIVE_MS),
    RATE_LIMITS: z.string().optional(),
    WEBHOOK_RETRY_SCHEDULE_MS: z
      .string()
      .regex(/^\s*\d+(\s*,\s*\d+)*\s*$/, { error: 'must be delays in milliseconds separated by commas' })
      .transform((v) => v.split(',').map(Number))
      .optional(),
    WEBHOOK_ALLOWED_NETWORKS: z
      .string()
      .default('')
      .transform((v) =>
        v
          .split(',')
          .map((n) => n.trim())
          .filter(Boolean),
      )
      .refine((networks) => networks.every(isNetwork), { error: 'must be networks such as 10.0.0.0/8,fd00::/8' }),
    WEBHOOK_SECRET_KEY: z.string().min(32, { error: 'must be at least 32 characters' }).optional(),
    MAX_UPLOAD_BYTES: wholeNumber(1).default(104_857_600),
    STREAM_IDLE_TIMEOUT_MS: wholeNumber(1000).default(30_000),
    // Unset: files on disk under DATA_DIR/media. Set: an S3-compatible bucket; credentials come from
    // the standard AWS variables, which the SDK reads itself.
    MEDIA_S3_BUCKET: z.string().min(1).optional(),
    MEDIA_S3_ENDPOINT: z.url({ error: 'must be a URL such as http://localhost:9000' }).optional(),
    MEDIA_S3_REGION: z.string().min(1).default('us-east-1'),
    // Unset: no push. A Gorush server's /api/push URL (docs/push.md).
    PUSH_GATEWAY_URL: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://gorush:8088/api/push' })
      .optional(),
    PUSH_PREVIEW: z.enum(['full', 'sender', 'none']).default('full'),
    // How long an instance's presence outlives its last heartbeat (Redis): a killed instance's users go offline then.
    PRESENCE_TTL_MS: wholeNumber(300, 600_000).default(45_000),
  })
  .transform((env, ctx) => {
    /** A variable's parse, or an issue naming it. */
    const parse = <T>(name: string, f: () => T): T => {
      try {
        return f()
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: [name], message: (error as Error).message })
        return z.NEVER
      }
    }
    for (const [variable, message] of tokenProviderProblems(env))
      ctx.addIssue({ code: 'custom', path: [variable], message })
    return {
      ...env,
      RATE_LIMITS: parse('RATE_LIMITS', () => parseRateLimits(env.RATE_LIMITS, env.TRUST_PROXY)),
      AUTH_PROVIDER: parseTokenProvider(env),
      CORS_ORIGINS: parse('CORS_ORIGINS', () => parseCorsOrigins(env.CORS_ORIGINS, env.NODE_ENV === 'production')),
    }
  })

export type Config = z.infer<typeof Env>

/** Values that must not reach a log, even when wrong. */
const SECRET = new Set(['AUTH_SECRET', 'DATABASE_URL', 'DATABASE_REPLICA_URLS', 'REDIS_URL', 'WEBHOOK_SECRET_KEY'])

/** The environment, validated; a bad value is a StartupError naming each variable, what it holds and what it must be. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = Env.safeParse(env)
  if (parsed.success) return parsed.data
  const problems = parsed.error.issues.map(({ path, message }) => {
    const name = String(path[0])
    return `${name}${SECRET.has(name) ? '' : `=${JSON.stringify(env[name])}`} ${message}`
  })
  throw new StartupError(`invalid environment: ${problems.join('; ')} (see "Environment variables" in README.md)`)
}
