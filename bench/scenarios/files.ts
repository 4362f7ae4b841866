import { randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { median } from '../measure.ts'
import { startParleyProcess, type ParleyProcess } from '../server-process.ts'
import { createScenarioDatabase, tokenFor, type DatabaseHost, type Figure } from '../support.ts'

const SIZE = 50 * 1024 * 1024
const RUNS = 3
const MB = 1024 * 1024

/** The baseline: the same file streamed to another with fs, and fsynced, as Parley's store does. */
async function fsCopy(from: string, to: string): Promise<number> {
  const started = performance.now()
  // flush: fsync before the stream closes.
  await pipeline(createReadStream(from), createWriteStream(to, { flush: true }))
  return performance.now() - started
}

/** Reads a stream to its end, keeping nothing: the download's consumer. */
const discard = () => new Writable({ write: (_chunk, _encoding, done) => done() })

/** The server's highest RSS while `work` runs, sampled every 10 ms. */
async function peakRss<T>(server: ParleyProcess, work: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = server.rssBytes()
  const timer = setInterval(() => (peak = Math.max(peak, server.rssBytes())), 10)
  try {
    const result = await work()
    return { result, peak: Math.max(peak, server.rssBytes()) }
  } finally {
    clearInterval(timer)
  }
}

/**
 * Scenario: a 50 MB file through the local store: the PUT (streamed to disk) and the GET of its
 * signed URL, each as a ratio of the throughput of an fs copy of the same file in the same run
 * (target ≥ 0.5×), and how far Parley's RSS rises above its rest while they run (target: under 50 MB).
 */
export async function files(host: DatabaseHost): Promise<Figure[]> {
  const database = await createScenarioDatabase(host, 'files')
  const dir = await mkdtemp(path.join(tmpdir(), 'parley-bench-files-'))
  const server = await startParleyProcess(database.url, { env: { DATA_DIR: dir } })
  try {
    const file = path.join(dir, 'source.bin')
    await writeFile(file, randomBytes(SIZE))
    const token = await tokenFor('files-bench')
    const gql = async (query: string, variables: object) => {
      const response = await fetch(server.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query, variables }),
      })
      const body = (await response.json()) as { data: Record<string, Record<string, string>>; errors?: unknown }
      if (body.errors) throw new Error(JSON.stringify(body.errors))
      return body.data
    }
    // Read after the warm-up round: what the first requests load (GraphQL, sharp, the SDKs) is not growth per file.
    let rest = 0
    const copies: number[] = []
    const uploads: number[] = []
    const downloads: number[] = []
    let peak = 0
    for (let run = 0; run <= RUNS; run++) {
      const copy = await fsCopy(file, path.join(dir, `copy-${run}.bin`))
      const { createUpload: slot } = await gql(
        'mutation($i: CreateUploadInput!) { createUpload(input: $i) { uploadId url } }',
        { i: { name: 'big.bin', sizeBytes: SIZE, mimeType: 'application/octet-stream', kind: 'FILE' } },
      )
      const upload = await peakRss(server, async () => {
        const started = performance.now()
        const response = await fetch(slot!.url!, {
          method: 'PUT',
          body: Readable.toWeb(createReadStream(file)) as ReadableStream,
          duplex: 'half',
        } as RequestInit)
        if (response.status !== 200) throw new Error(`PUT answered ${response.status}`)
        return performance.now() - started
      })
      const { completeUpload } = await gql('mutation($id: ID!) { completeUpload(uploadId: $id) { url } }', {
        id: slot!.uploadId,
      })
      const download = await peakRss(server, async () => {
        const started = performance.now()
        const response = await fetch(completeUpload!.url!)
        await pipeline(Readable.fromWeb(response.body as never), discard())
        return performance.now() - started
      })
      // The first round warms up (JIT, page cache) and is not counted.
      if (run === 0) {
        rest = server.rssBytes()
        peak = rest
        continue
      }
      copies.push(copy)
      uploads.push(upload.result)
      downloads.push(download.result)
      peak = Math.max(peak, upload.peak, download.peak)
    }
    const copyMs = median(copies)
    const figure = (what: string, ms: number): Figure => {
      const ratio = copyMs / ms
      return {
        scenario: `files: ${what} of a 50 MB file through the local store`,
        metric: 'MB/s',
        value: (SIZE / MB / (ms / 1000)).toFixed(0),
        baseline: `${(SIZE / MB / (copyMs / 1000)).toFixed(0)} (fs copy with fsync)`,
        ratio,
        target: '≥ 0.5',
        met: ratio >= 0.5,
      }
    }
    const growth = (peak - rest) / MB
    return [
      figure('upload (PUT)', median(uploads)),
      figure('download (GET)', median(downloads)),
      {
        scenario: 'files: Parley RSS growth above rest during the uploads and downloads',
        metric: 'MB',
        value: growth.toFixed(1),
        baseline: `${(rest / MB).toFixed(0)} (RSS at rest)`,
        ratio: growth / 50,
        target: '< 50 MB',
        met: growth < 50,
      },
    ]
  } finally {
    await server.close()
    await database.drop()
    await rm(dir, { recursive: true, force: true })
  }
}
