import { Parser } from 'htmlparser2'

/**
 * What a page or file makes the browser load, read from its text: for HTML the src/href attributes,
 * url() and @import in inline styles, paths and URLs in JSON data blocks, and the runtime loads of
 * inline scripts; for CSS its url() and @import targets; for JS the absolute URLs it loads at run
 * time. Links in license comments or documentation strings are not loads and are not reported.
 */
export function referencesIn(kind: 'html' | 'css' | 'js', text: string): string[] {
  if (kind === 'css') return cssReferences(text)
  if (kind === 'js') return runtimeLoads(text)
  const found: string[] = []
  let inside: { tag: string; type: string } | undefined
  let body = ''
  const parser = new Parser({
    onopentag(tag, attributes) {
      for (const name of ['src', 'href', 'srcset', 'poster', 'data'])
        if (attributes[name]) found.push(attributes[name].trim())
      if (attributes.style) found.push(...cssReferences(attributes.style))
      if (tag === 'script' || tag === 'style') inside = { tag, type: attributes.type ?? '' }
      body = ''
    },
    ontext(text) {
      if (inside) body += text
    },
    onclosetag(tag) {
      if (!inside || inside.tag !== tag) return
      if (tag === 'style') found.push(...cssReferences(body))
      else if (inside.type.includes('json')) found.push(...jsonLocations(JSON.parse(body)))
      else found.push(...runtimeLoads(body))
      inside = undefined
    },
  })
  parser.write(text)
  parser.end()
  return found
}

function cssReferences(css: string): string[] {
  const urls = [...css.matchAll(/url\(\s*(['"]?)(.*?)\1\s*\)/g)].map((m) => m[2]!)
  const imports = [...css.matchAll(/@import\s+(['"])(.*?)\1/g)].map((m) => m[2]!)
  return [...urls, ...imports]
}

/** Calls that fetch at run time, with an absolute (or protocol-relative) URL as their first argument. */
const RUNTIME_LOAD =
  /\b(?:fetch|import|importScripts|Worker|SharedWorker|EventSource|WebSocket|sendBeacon)\s*\(\s*[`'"]((?:[a-z]+:)?\/\/[^`'"\s]+)/gi
/** Assignments that make the browser load a URL (a script's or image's src, a stylesheet's href). */
const ASSIGNED_LOAD = /\.(?:src|href)\s*=\s*[`'"]((?:[a-z]+:)?\/\/[^`'"\s]+)/gi

function runtimeLoads(js: string): string[] {
  return [...js.matchAll(RUNTIME_LOAD), ...js.matchAll(ASSIGNED_LOAD)].map((m) => m[1]!)
}

/** Strings in a JSON data block that name a location (a path or a URL): the page may load them. */
function jsonLocations(value: unknown): string[] {
  if (typeof value === 'string') return /^(\/|[a-z]+:\/\/)/i.test(value) ? [value] : []
  if (value && typeof value === 'object') return Object.values(value).flatMap(jsonLocations)
  return []
}

/** The kind of text a response holds, by its content type; null for files that load nothing (images). */
function kindOf(contentType: string | null): 'html' | 'css' | 'js' | null {
  if (contentType?.startsWith('text/html')) return 'html'
  if (contentType?.startsWith('text/css')) return 'css'
  if (contentType && /javascript/.test(contentType)) return 'js'
  return null
}

/** Schemes whose content is in the reference itself: nothing is fetched. */
const SELF_CONTAINED = new Set(['data:', 'blob:', 'about:'])

export type Crawl = { fetched: { url: string; status: number; contentType: string | null }[]; foreign: string[] }

/**
 * Loads `pageUrl` as a browser asking for HTML would, then every file it references, transitively:
 * same-origin references are fetched, any other host is reported in `foreign` and not contacted.
 */
export async function crawl(pageUrl: string): Promise<Crawl> {
  const origin = new URL(pageUrl).origin
  const result: Crawl = { fetched: [], foreign: [] }
  const seen = new Set<string>()
  const queue = [{ url: pageUrl, accept: 'text/html' }]
  while (queue.length) {
    const { url, accept } = queue.shift()!
    if (seen.has(url)) continue
    seen.add(url)
    const response = await fetch(url, { headers: { accept } })
    const contentType = response.headers.get('content-type')
    const kind = kindOf(contentType)
    const text = kind ? await response.text() : (await response.arrayBuffer(), '')
    result.fetched.push({ url, status: response.status, contentType })
    if (!kind) continue
    for (const reference of referencesIn(kind, text)) {
      const target = new URL(reference, url)
      if (SELF_CONTAINED.has(target.protocol)) continue
      if (target.origin !== origin) result.foreign.push(reference)
      else queue.push({ url: target.href, accept: '*/*' })
    }
  }
  return result
}
