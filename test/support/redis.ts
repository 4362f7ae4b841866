import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { afterAll } from 'vitest'

/** A port nobody listens on right now. */
async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return port
}

/**
 * A redis-server of the test's own (Debian's `redis-server`), on a port of its own, without
 * persistence: `stop()` kills it at once (an outage), `start()` brings it back on the same port.
 * Stopped after the file's tests.
 */
export async function ownRedis() {
  const port = await freePort()
  let child: ChildProcess | undefined
  const server = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      )
      let output = ''
      await new Promise<void>((resolve, reject) => {
        child!.stdout!.on('data', (d) => {
          output += d
          if (output.includes('Ready to accept connections')) resolve()
        })
        child!.once('exit', (code) => reject(new Error(`redis-server exited with ${code}:\n${output}`)))
      })
    },
    async stop() {
      if (!child || child.exitCode !== null) return
      const exited = once(child, 'exit')
      child.kill('SIGKILL')
      await exited
    },
  }
  await server.start()
  afterAll(() => server.stop())
  return server
}
