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
  const target = new URL(url)
  // Node connects to an address literal without a lookup: judged here against today's rules.
  const literal = target.hostname.replace(/^\[(.*)\]$/, '$1')
  const refused = isIP(literal) ? await checkHost(literal, opts.rules) : null
  if (refused) throw new Error(refused)
  const client = target.protocol === 'https:' ? https : http
  return new Promise<number>((resolve, reject) => {
    const request = client.request(target, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      agent: target.protocol === 'https:' ? opts.agents.https : opts.agents.http,
      lookup: guardedLookup(opts.rules),
    })
    const deadline = setTimeout(
      () => request.destroy(new Error(`no answer within ${opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS} ms`)),
      opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS,
    )
    const settle = (finish: () => void) => {
      clearTimeout(deadline)
      finish()
    }
    request.on('error', (error) => settle(() => reject(error)))
    request.on('response', (response) => {
      let read = 0
      response.on('data', (chunk: Buffer) => {
        read += chunk.length
        // Enough is known; the rest is not read (the connection is not reused).
        if (read > RESPONSE_CAP_BYTES) settle(() => (resolve(response.statusCode!), response.destroy()))
      })
      response.on('end', () => settle(() => resolve(response.statusCode!)))
      response.on('error', (error) => settle(() => reject(error)))
    })
    request.end(body)
  })
}
