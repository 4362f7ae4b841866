import http from 'node:http'
import { encodeGlobalId } from '../../src/domain/core/ids.ts'
import { signToken } from '../../src/http/auth/hs256.ts'
import { insertReadersConversation } from '../setup.ts'
import type { LoadClient } from '../client.ts'
import { startParleyProcess, type ParleyProcess } from '../server-process.ts'
import { AUTH_SECRET, openFixture, type DatabaseHost, type Figure } from '../support.ts'

const MESSAGES = Number(process.env.BENCH_EXPORT_MESSAGES ?? 200_000)
const MIB = 1024 * 1024
/** Idle time before RSS is read at rest, so V8's memory reducer has run after start-up's work. */
const SETTLE_MS = 5_000
/** The bound on the server's RSS growth during one export. */
const BOUND_MIB = 50

type Reader = { gzip: boolean; pauseMs: number }

/**
 * One export read to its end by this process (its bytes counted, not kept), `pauseMs` idle after
 * each chunk (a slow reader), while the server's RSS is sampled every 10 ms: the peak RSS and the
 * lines (newlines; gzip bytes when compressed).
 */
function readExport(
  parley: ParleyProcess,
  url: string,
  token: string,
  reader: Reader,
): Promise<{ peak: number; bytes: number; lines: number }> {
  let peak = parley.rssBytes()
  const sampler = setInterval(() => (peak = Math.max(peak, parley.rssBytes())), 10)
  return new Promise<{ peak: number; bytes: number; lines: number }>((resolve, reject) => {
    const headers = { authorization: `Bearer ${token}`, ...(reader.gzip ? { 'accept-encoding': 'gzip' } : {}) }
    http
      .get(url, { headers }, (response) => {
        if (response.statusCode !== 200) reject(new Error(`export answered ${response.statusCode}`))
        let bytes = 0
        let lines = 0
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++
          if (reader.pauseMs) {
            response.pause()
            setTimeout(() => response.resume(), reader.pauseMs)
          }
        })
        response.on('end', () => resolve({ peak: Math.max(peak, parley.rssBytes()), bytes, lines }))
        response.on('error', reject)
      })
      .on('error', reject)
  }).finally(() => clearInterval(sampler))
}

/**
 * Issue 45's export memory: the server process's RSS growth (peak during the export less RSS at
 * rest just before it) while an operator exports a conversation of MESSAGES messages through
 * GET /export/conversations/{id}, against the server as `npm start` runs it. Each way of reading runs
 * on a fresh server (warmed by one small request, then idle SETTLE_MS), so each figure includes
 * what a first export makes the process grow to: read as fast as this process can, gzipped, by a
 * slow reader (5 ms idle after each chunk); and a second fast export on the first server (memory
 * an export leaves behind would show there).
 */
export async function exportScenario(host: DatabaseHost, client: LoadClient): Promise<Figure[]> {
  const database = await openFixture(host, `export_${MESSAGES}`, (url) => insertReadersConversation(url, MESSAGES))
  try {
    const operator = await signToken(AUTH_SECRET, 'export-operator', { operator: true })
    const path = `/export/conversations/${encodeGlobalId('Conversation', database.fixture)}`
    const figures: Figure[] = []
    const measure = async (parley: ParleyProcess, how: string, reader: Reader) => {
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
      const rest = parley.rssBytes()
      const started = performance.now()
      const { peak, bytes, lines } = await readExport(parley, new URL(path, parley.endpoint).href, operator, reader)
      const seconds = (performance.now() - started) / 1000
      if (!reader.gzip && lines !== MESSAGES) throw new Error(`${lines} lines, not ${MESSAGES}`)
      const growth = (peak - rest) / MIB
      figures.push({
        scenario: `45 export of ${MESSAGES.toLocaleString('en')} messages (NDJSON), ${how}: server RSS growth`,
        metric: 'MiB',
        value: growth.toFixed(1),
        baseline: `${(rest / MIB).toFixed(0)} MiB (RSS at rest before it)`,
        ratio: peak / rest,
        target: `growth < ${BOUND_MIB} MB`,
        met: growth * MIB < BOUND_MIB * 1e6,
        note: `${(bytes / MIB).toFixed(0)} MiB in ${seconds.toFixed(1)} s`,
      })
    }
    const runs: [string, Reader][] = [
      ['read as fast as it comes', { gzip: false, pauseMs: 0 }],
      ['gzip, read as fast as it comes', { gzip: true, pauseMs: 0 }],
      ['a slow reader (5 ms idle after each chunk)', { gzip: false, pauseMs: 5 }],
    ]
    for (const [i, [how, reader]] of runs.entries()) {
      const parley = await startParleyProcess(database.url)
      try {
        await client.request({ endpoint: parley.endpoint, call: { token: operator, query: '{ viewer { id } }' } })
        await measure(parley, `${how}, a fresh server`, reader)
        if (i === 0) await measure(parley, `${how}, the same server's second export`, reader)
      } finally {
        await parley.close()
      }
    }
    return figures
  } finally {
    await database.drop()
  }
}
