import { fork } from 'node:child_process'
import type { Jobs, Reply, Request } from './client-process.ts'

export type { GraphQLCall } from './client-process.ts'

export type LoadClient = {
  [J in keyof Jobs]: (...args: Parameters<Jobs[J]>) => ReturnType<Jobs[J]>
} & { close(): void; /** The load client's process, whose CPU the machine's figures count. */ pid: number }

/**
 * Starts the load generator in its own process (bench/client-process.ts). The clients of a real
 * deployment never share Parley's event loop; in the same process their HTTP and WebSocket work
 * would be counted as Parley's.
 */
export function startClient(): LoadClient {
  const child = fork(new URL('./client-process.ts', import.meta.url), {
    execArgv: ['--import', 'tsx'],
    serialization: 'advanced',
  })
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>()
  let nextId = 0
  child.on('message', ({ id, result, error }: Reply) => {
    const w = waiting.get(id)!
    waiting.delete(id)
    if (error !== undefined) w.reject(new Error(`load client: ${error}`))
    else w.resolve(result)
  })
  child.on('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error(`load client exited with ${code}`))
  })
  const call = (job: keyof Jobs, args: unknown) =>
    new Promise((resolve, reject) => {
      const id = nextId++
      waiting.set(id, { resolve, reject })
      child.send({ id, job, args } satisfies Request)
    })
  return new Proxy({} as LoadClient, {
    get: (_, name) =>
      name === 'close'
        ? () => void child.kill()
        : name === 'pid'
          ? child.pid
          : (args: unknown) => call(name as keyof Jobs, args),
  })
}
