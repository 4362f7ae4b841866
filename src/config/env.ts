import { z } from 'zod'
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

/** Every environment variable Parley reads, validated once at start-up (documented in README.md). */
const Env = z
  .object({
    NODE_ENV: z.string().default('development'),
    PORT: wholeNumber(0, 65535).default(4000),
    HOST: z.string().default('0.0.0.0'),
    DATABASE_URL: z.url({ error: 'must be a URL such as postgresql://user:password@localhost:5432/parley' }).optional(),
    DATA_DIR: z.string().default('.data'),
    EMBEDDED_PG_PORT: wholeNumber(1, 65535).default(54329),
    DATABASE_POOL_SIZE: wholeNumber(1, 500).default(20),
    DATABASE_POOL_TIMEOUT_MS: wholeNumber(1).default(10_000),
    AUTH_SECRET: z
      .string()
      .min(32, { error: 'must be at least 32 characters (for example: openssl rand -base64 32)' })
      .optional(),
    MAX_BODY_BYTES: wholeNumber(1024).default(1_000_000),
    LOG_LEVEL: z
      .enum(['debug', 'info', 'warn', 'error'], { error: 'must be one of debug, info, warn, error' })
      .default('info'),
    RECALL_WINDOW_SECONDS: wholeNumber(0).default(120),
    READ_RECEIPTS_PRIVATE: booleanFlag.default(true),
    READ_RECEIPTS_GROUP: booleanFlag.default(true),
    SENSITIVE_WORDS_FILE: z.string().optional(),
    REDIS_URL: z.string().optional(),
    RESYNC_LIMIT: wholeNumber(1).default(1000),
    SEND_COALESCING: booleanFlag.default(true),
    PINNED_MESSAGES_LIMIT: wholeNumber(1, 1000).default(10),
    REACTION_EMOJI_LIMIT: wholeNumber(1, 1000).default(20),
    REACTIONS_PER_USER_LIMIT: wholeNumber(1, 1000).default(3),
    PINNED_CONVERSATIONS_LIMIT: wholeNumber(0, 1000).default(5),
    METRICS: booleanFlag.default(false),
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
    MAX_UPLOAD_BYTES: wholeNumber(1).default(104_857_600),
    // Unset: files on disk under DATA_DIR/media. Set: an S3-compatible bucket; credentials come from
    // the standard AWS variables, which the SDK reads itself.
    MEDIA_S3_BUCKET: z.string().min(1).optional(),
    MEDIA_S3_ENDPOINT: z.url({ error: 'must be a URL such as http://localhost:9000' }).optional(),
    MEDIA_S3_REGION: z.string().min(1).default('us-east-1'),
  })
  .transform((env, ctx) => {
    try {
      return { ...env, RATE_LIMITS: parseRateLimits(env.RATE_LIMITS, env.TRUST_PROXY) }
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['RATE_LIMITS'], message: (error as Error).message })
      return z.NEVER
    }
  })

export type Config = z.infer<typeof Env>

/** Values that must not reach a log, even when wrong. */
const SECRET = new Set(['AUTH_SECRET', 'DATABASE_URL', 'REDIS_URL'])

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
