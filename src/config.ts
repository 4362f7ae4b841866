import { z } from 'zod'

const booleanFlag = z.enum(['true', 'false', '1', '0', 'on', 'off']).transform((v) => ['true', '1', 'on'].includes(v))

/** Every environment variable Parley reads, validated once at start-up (documented in README.md). */
const Env = z.object({
  NODE_ENV: z.string().default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: z.string().url().optional(),
  DATA_DIR: z.string().default('.data'),
  EMBEDDED_PG_PORT: z.coerce.number().int().min(1).max(65535).default(54329),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(20),
  AUTH_SECRET: z.string().min(32, 'AUTH_SECRET must be at least 32 characters').optional(),
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(1_000_000),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  RECALL_WINDOW_SECONDS: z.coerce.number().int().min(0).default(120),
  READ_RECEIPTS_PRIVATE: booleanFlag.default(true),
  READ_RECEIPTS_GROUP: booleanFlag.default(true),
  SENSITIVE_WORDS_FILE: z.string().optional(),
  REDIS_URL: z.string().optional(),
  RESYNC_LIMIT: z.coerce.number().int().min(1).default(1000),
  SEND_COALESCING: booleanFlag.default(true),
})

export type Config = z.infer<typeof Env>

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = Env.safeParse(env)
  if (!parsed.success) {
    throw new Error(`Invalid environment:\n${z.prettifyError(parsed.error)}`)
  }
  return parsed.data
}
