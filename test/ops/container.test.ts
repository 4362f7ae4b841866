import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'

// No Docker daemon on the development machines: these check the recipe's shape, not a built image.
const ROOT = path.resolve(import.meta.dirname, '../..')
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8')

/** Dockerfile instructions (continuation lines joined, comments dropped) grouped by stage, with each stage's base image. */
function stages(dockerfile: string): { name: string; image: string; instructions: string[] }[] {
  const lines = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
  const result: { name: string; image: string; instructions: string[] }[] = []
  for (const line of lines) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line)
    if (from) result.push({ name: from[2] ?? `stage${result.length}`, image: from[1]!, instructions: [] })
    else result.at(-1)!.instructions.push(line)
  }
  return result
}

describe('Dockerfile', () => {
  const all = stages(read('Dockerfile'))
  const final = all.at(-1)!
  const has = (stage: { instructions: string[] }, pattern: RegExp) => stage.instructions.some((i) => pattern.test(i))

  it('builds in one stage and runs the compiled build in another', () => {
    expect(all.length).toBeGreaterThanOrEqual(2)
    expect(has(all[0]!, /^RUN .*npm ci\b.*npm run build\b/)).toBe(true)
    expect(has(final, /^COPY --from=build \S*dist \S*dist$/)).toBe(true)
    expect(final.instructions.filter((i) => /^CMD /.test(i))).toEqual(['CMD ["node", "dist/src/main.js"]'])
    expect(has(final, /tsx/)).toBe(false)
  })

  it('runs as a non-root user and checks /healthz', () => {
    const users = final.instructions.filter((i) => /^USER /.test(i))
    expect(users.length).toBe(1)
    expect(users[0]).not.toMatch(/^USER\s+(root|0)(:|$)/)
    expect(final.instructions.findIndex((i) => /^USER /.test(i))).toBeLessThan(
      final.instructions.findIndex((i) => /^CMD /.test(i)),
    )
    expect(has(final, /^HEALTHCHECK .*CMD .*\/healthz/)).toBe(true)
  })

  it("runs on the Node.js major npm's scripts run on (decision 0268), and ships no second Node.js", () => {
    const pinned = (JSON.parse(read('package.json')) as { optionalDependencies: Record<string, string> })
      .optionalDependencies
    const majors = new Set(
      Object.entries(pinned).flatMap(([name, version]) =>
        name.startsWith('node-linux-') ? [version.split('.')[0]] : [],
      ),
    )
    expect(majors.size).toBe(1)
    expect(new Set(all.map((stage) => /^node:(\d+)-/.exec(stage.image)?.[1]))).toEqual(majors)
    expect(has(all[0]!, /npm prune --omit=dev.*rm -rf node_modules\/node-linux-\* node_modules\/\.bin\/node/)).toBe(
      true,
    )
  })

  it('ships what start-up needs besides dist: the Prisma config, migrations and the engine shim', () => {
    for (const file of ['prisma.config.ts', 'prisma', 'scripts/schema-engine-shim.mjs']) {
      expect(existsSync(path.join(ROOT, file))).toBe(true)
      expect(has(final, new RegExp(`^COPY --from=build .*${file.replaceAll('.', '\\.')}`))).toBe(true)
    }
  })
})

/** What these tests read of a compose.yaml service. */
type ComposeService = {
  build?: string
  image?: string
  environment?: Record<string, string>
  depends_on?: unknown
  volumes?: string[]
}

describe('compose.yaml', () => {
  const compose = parse(read('compose.yaml'), { merge: true }) as {
    services: Record<string, ComposeService> & Record<'postgres' | 'redis' | 'proxy', ComposeService>
  }

  it('runs two Parley instances on PostgreSQL and Redis behind a proxy', () => {
    const parleys = Object.entries(compose.services).filter(([, s]) => s.build === '.')
    expect(parleys.map(([name]) => name)).toEqual(['parley-1', 'parley-2'])
    for (const [, service] of parleys) {
      expect(service.environment?.DATABASE_URL).toMatch(/@postgres:5432\//)
      expect(service.environment?.REDIS_URL).toBe('redis://redis:6379')
      expect(service.environment?.NODE_ENV).toBe('production')
    }
    expect(compose.services.postgres.image).toMatch(/^postgres:/)
    expect(compose.services.redis.image).toMatch(/^redis:/)
    expect(compose.services.proxy.depends_on).toEqual(['parley-1', 'parley-2'])
  })

  it('the proxy config balances over both instances and upgrades WebSockets', () => {
    const mount = (compose.services.proxy.volumes as string[]).find((v) => v.endsWith(':/etc/nginx/nginx.conf:ro'))!
    const config = read(mount.split(':')[0]!)
    for (const name of ['parley-1', 'parley-2']) expect(config).toContain(`server ${name}:4000`)
    expect(config).toMatch(/proxy_set_header Upgrade \$http_upgrade;/)
    expect(config).toMatch(/proxy_set_header Connection \$connection_upgrade;/)
  })
})
