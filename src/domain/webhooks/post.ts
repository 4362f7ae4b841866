import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import { checkHost, guardedLookup, type AddressRules } from './address.ts'

/** A receiver is hostile: one attempt costs at most this long and reads at most this much. */
export const ATTEMPT_TIMEOUT_MS = 10_000
const RESPONSE_CAP_BYTES = 64 * 1024

/** Keep-alive connections, one pool per worker: most deliveries go to few receivers. */
export type Agents = { http: http.Agent; https: https.Agent }
export const createAgents = (): Agents => ({
  http: new http.Agent({ keepAlive: true }),
  https: new https.Agent({ keepAlive: true }),
})

/**
 * POSTs `body` and resolves with the status code once at most 64 KB of the answer were read. No
 * redirect is followed (a 3xx is an answer like any other); the address is checked as the connection
 * is made; a receiver that has not answered within `timeoutMs` fails the attempt.
 */
export async function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: { rules: AddressRules; agents: Agents; timeoutMs?: number },
): Promise<number> {
  return (await postCapped(url, headers, body, opts)).status
}

/**
 * postWebhook's request, resolving with the status and the answer's first 64 KB as text (the push
 * gateway's answer lists failed tokens); `complete` false when the answer was longer.
 */
export async function postCapped(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: { rules: AddressRules; agents: Agents; timeoutMs?: number },
): Promise<{ status: number; body: string; complete: boolean }> {
  const target = new URL(url)
  // Node connects to an address literal without a lookup: judged here against today's rules.
  const literal = target.hostname.replace(/^\[(.*)\]$/, '$1')
  const refused = isIP(literal) ? await checkHost(literal, opts.rules) : null
  if (refused) throw new Error(refused)
  const client = target.protocol === 'https:' ? https : http
  const timeoutMs = opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS
  return new Promise((resolve, reject) => {
    const request = client.request(target, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      agent: target.protocol === 'https:' ? opts.agents.https : opts.agents.http,
      lookup: guardedLookup(opts.rules),
    })
    const deadline = setTimeout(() => request.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
    const settle = (finish: () => void) => {
      clearTimeout(deadline)
      finish()
    }
    request.on('error', (error) => settle(() => reject(error)))
    request.on('response', (response) => {
      const chunks: Buffer[] = []
      let read = 0
      const answer = (complete: boolean) => ({
        status: response.statusCode!,
        body: Buffer.concat(chunks).subarray(0, RESPONSE_CAP_BYTES).toString('utf8'),
        complete,
      })
      response.on('data', (chunk: Buffer) => {
        read += chunk.length
        if (read <= RESPONSE_CAP_BYTES + chunk.length) chunks.push(chunk)
        // Enough is known; the rest is not read (the connection is not reused).
        if (read > RESPONSE_CAP_BYTES) settle(() => (resolve(answer(false)), response.destroy()))
      })
      response.on('end', () => settle(() => resolve(answer(true))))
      response.on('error', (error) => settle(() => reject(error)))
    })
    request.end(body)
  })
}
