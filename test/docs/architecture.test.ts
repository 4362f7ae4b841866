import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * docs/architecture.md names files, exported names and other pages; this keeps it honest as the code
 * moves. The conventions, as the page states them:
 *
 * - a backticked path starting with a top-level folder (`src/…`, `test/…`, `docs/…`, `bench/…`,
 *   `scripts/…`, `prisma/…`, `contract/…`) is read from the repository root; one starting with a
 *   layer folder (`http/…`, `schema/…`, `domain/…`, `store/…`, `realtime/…`, `ops/…`, `db/…`,
 *   `config/…`, `lib/…`) from `src/`. It must exist (a trailing `/` is a folder, a `*` in the last
 *   part must match a file);
 * - `path#name` means the file exports `name`; `path#Class.member`, that it exports `Class` and
 *   `member` is declared in its body;
 * - a bare file name with an extension (`queue.ts`, `eslint.config.js`) must exist at the root or
 *   somewhere under `src/` (it is read relative to the folder its table row or sentence names);
 * - a path with `<…>` in it is a pattern and is not checked;
 * - every relative markdown link resolves to a file or folder, and a `#fragment` to a heading of the
 *   target page (GitHub's anchors).
 */

const root = path.resolve(import.meta.dirname, '../..')
const DOC = 'docs/architecture.md'

const ROOT_FOLDERS = ['src', 'test', 'docs', 'bench', 'scripts', 'prisma', 'contract']
const SRC_FOLDERS = ['http', 'schema', 'domain', 'store', 'realtime', 'ops', 'db', 'config', 'lib']
const EXTENSIONS = ['ts', 'js', 'mjs', 'json', 'md', 'sql', 'prisma', 'graphql', 'txt', 'yaml', 'yml']

/** A path token: folders, then a file or folder (a trailing `/`), then optionally `#name` or `#Class.member`. */
const PATH_TOKEN = /^((?:[\w.-]+\/)*[\w.*-]*\/?)(?:#([A-Za-z_$][\w$]*)(?:\.([A-Za-z_$][\w$]*))?)?$/
const BARE_FILE = new RegExp(`^[\\w.-]+\\.(?:${EXTENSIONS.join('|')})$`)

type Report = { paths: string[]; symbols: string[]; links: string[]; problems: string[] }

const withoutFences = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, '')

/** Inline code spans outside fenced blocks. */
const codeSpans = (markdown: string) => [...withoutFences(markdown).matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!.trim())

/** Relative links `[text](target)` outside code. */
const linkTargets = (markdown: string) =>
  [
    ...withoutFences(markdown)
      .replace(/`[^`\n]*`/g, '')
      .matchAll(/\]\(([^)\s]+)\)/g),
  ]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/i.test(target))

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const [, text] of withoutFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = text!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count ? `${slug}-${count}` : slug)
  }
  return anchors
}

const escape = (s: string) => s.replace(/[$]/g, '\\$')

/** Whether a module's source exports `name`: a declaration, or a (re-)export list naming it. */
function exportsName(source: string, name: string): boolean {
  const declared = new RegExp(
    `export\\s+(?:declare\\s+)?(?:default\\s+)?(?:async\\s+)?(?:abstract\\s+)?` +
      `(?:function\\*?|const|let|var|class|interface|type|enum|namespace)\\s+${escape(name)}(?![\\w$])`,
  )
  if (declared.test(source)) return true
  for (const [, list] of source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const item of list!.split(',')) {
      const parts = item
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
      if (parts.at(-1) === name) return true
    }
  }
  return false
}

/** The body of `class Name`, `interface Name` or `type Name = {` (braces matched), or null. */
function bodyOf(source: string, name: string): string | null {
  const start = new RegExp(`(?:class|interface|type)\\s+${escape(name)}(?![\\w$])`).exec(source)
  if (!start) return null
  const open = source.indexOf('{', start.index)
  if (open < 0) return null
  let depth = 0
  for (let i = open; i < source.length; i++) {
    if (source[i] === '{') depth++
    else if (source[i] === '}' && --depth === 0) return source.slice(open, i + 1)
  }
  return null
}

/** A member declared in a class or object type body: a method, accessor or property. */
const declaresMember = (body: string, member: string) =>
  new RegExp(
    `(?:^|[\\s;{])(?:(?:public|private|protected|static|readonly|override|async|get|set)\\s+)*${escape(member)}\\s*[(<:=?]`,
    'm',
  ).test(body)

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => path.basename(f))
}

/** Everything `markdown` (the page at `docPath`, relative to the root) names that does not exist. */
function check(markdown: string, docPath: string): Report {
  const report: Report = { paths: [], symbols: [], links: [], problems: [] }
  const srcFiles = new Set(filesUnder(path.join(root, 'src')))

  for (const token of new Set(codeSpans(markdown))) {
    if (token.includes('<')) continue
    if (BARE_FILE.test(token)) {
      report.paths.push(token)
      if (!existsSync(path.join(root, token)) && !srcFiles.has(token))
        report.problems.push(`\`${token}\`: no such file at the root or under src/`)
      continue
    }
    const first = token.split('/')[0]!
    const underSrc = SRC_FOLDERS.includes(first)
    if (!token.includes('/') || (!underSrc && !ROOT_FOLDERS.includes(first))) continue
    const match = PATH_TOKEN.exec(token)
    if (!match) {
      report.problems.push(
        `\`${token}\`: starts like a path but is not \`path\`, \`path#name\` or \`path#Class.member\``,
      )
      continue
    }
    const [, file, name, member] = match
    const relative = underSrc ? `src/${file}` : file!
    const absolute = path.join(root, relative)
    report.paths.push(relative)
    if (relative.includes('*')) {
      const pattern = new RegExp(`^${path.basename(relative).replace(/\./g, '\\.').replace(/\*/g, '.*')}$`)
      const dir = path.dirname(absolute)
      if (!existsSync(dir) || !readdirSync(dir).some((f) => pattern.test(f)))
        report.problems.push(`\`${token}\`: no file matches ${relative}`)
      continue
    }
    if (!existsSync(absolute)) {
      report.problems.push(`\`${token}\`: ${relative} does not exist`)
      continue
    }
    if (relative.endsWith('/') && !statSync(absolute).isDirectory())
      report.problems.push(`\`${token}\`: ${relative} is not a folder`)
    if (!name) continue
    report.symbols.push(token)
    if (!relative.endsWith('.ts')) {
      report.problems.push(`\`${token}\`: only .ts files are checked for names`)
      continue
    }
    const source = readFileSync(absolute, 'utf8')
    if (!exportsName(source, name)) {
      report.problems.push(`\`${token}\`: ${relative} does not export ${name}`)
      continue
    }
    if (member) {
      const body = bodyOf(source, name)
      if (!body || !declaresMember(body, member))
        report.problems.push(`\`${token}\`: ${name} in ${relative} declares no member ${member}`)
    }
  }

  const docDir = path.dirname(path.join(root, docPath))
  for (const target of new Set(linkTargets(markdown))) {
    report.links.push(target)
    const [file = '', fragment] = target.split('#')
    const absolute = file ? path.resolve(docDir, file) : path.join(root, docPath)
    if (!existsSync(absolute)) {
      report.problems.push(`link ${target}: ${path.relative(root, absolute)} does not exist`)
      continue
    }
    if (fragment === undefined) continue
    const page = file ? readFileSync(absolute, 'utf8') : markdown
    if (!absolute.endsWith('.md') || !anchorsOf(page).has(fragment))
      report.problems.push(`link ${target}: no heading #${fragment} in ${path.relative(root, absolute)}`)
  }
  return report
}

describe('docs/architecture.md', () => {
  const report = check(readFileSync(path.join(root, DOC), 'utf8'), DOC)

  it('names only paths, exported names and links that exist', () => {
    expect(report.problems).toEqual([])
  })

  it('names enough of them for the check to mean something', () => {
    // A broken extraction would find nothing and pass the test above.
    expect(report.paths.length).toBeGreaterThan(100)
    expect(report.symbols.length).toBeGreaterThan(80)
    expect(report.links.length).toBeGreaterThan(20)
  })

  it('reports a path, a name, a member and a link that do not exist', () => {
    const sample = [
      '`src/domain/send/sendMessage.ts#sendMessage` and `domain/core/transact.ts#Committed` exist;',
      '`domain/live/subscription.ts#Subscription.nextLive` and `src/http/plugins/use*.ts` too;',
      '`domain/send/nowhere.ts` does not, nor `domain/send/queue.ts#enqueueNothing`,',
      '`domain/live/subscription.ts#Subscription.nextDead`, `nowhere.ts`,',
      'a [page](missing.md) or a [heading](realtime.md#no-such-heading); [this one](realtime.md#connecting) does.',
      '`domain/send/batch.ts#commitSends()` is malformed; `domain/<feature>/index.ts` is a pattern, `app.limits.consumeSend` no path.',
    ].join('\n')
    const { problems } = check(sample, DOC)
    expect(problems).toEqual([
      '`domain/send/nowhere.ts`: src/domain/send/nowhere.ts does not exist',
      '`domain/send/queue.ts#enqueueNothing`: src/domain/send/queue.ts does not export enqueueNothing',
      '`domain/live/subscription.ts#Subscription.nextDead`: Subscription in src/domain/live/subscription.ts declares no member nextDead',
      '`nowhere.ts`: no such file at the root or under src/',
      '`domain/send/batch.ts#commitSends()`: starts like a path but is not `path`, `path#name` or `path#Class.member`',
      'link missing.md: docs/missing.md does not exist',
      'link realtime.md#no-such-heading: no heading #no-such-heading in docs/realtime.md',
    ])
  })
})
