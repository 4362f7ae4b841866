import net from 'node:net'

/**
 * A TCP proxy in front of the test database, for outages without touching the shared server:
 * `down('refuse')` cuts every connection and stops listening (new connections: ECONNREFUSED),
 * `down('drop')` cuts them and drops each new one at once (the driver reads "Connection terminated"),
 * `up()` serves again on the same port. `url` is `databaseUrl` through the proxy.
 */
export async function startDbProxy(databaseUrl: string) {
  const target = new URL(databaseUrl)
  const socketDir = target.searchParams.get('host')
  const port = target.port || '5432'
  const connectTarget = (): net.Socket =>
    socketDir?.startsWith('/')
      ? net.connect(`${socketDir}/.s.PGSQL.${port}`)
      : net.connect(Number(port), target.hostname)
  const open = new Set<net.Socket>()
  let mode: 'up' | 'drop' = 'up'
  const server = net.createServer((client) => {
    client.on('error', () => {})
    if (mode === 'drop') return void client.destroy()
    const upstream = connectTarget()
    upstream.on('error', () => {})
    for (const socket of [client, upstream]) {
      open.add(socket)
      socket.once('close', () => open.delete(socket))
    }
    client.once('close', () => upstream.destroy())
    upstream.once('close', () => client.destroy())
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const proxyPort = (server.address() as net.AddressInfo).port
  const url = new URL(databaseUrl)
  url.searchParams.delete('host')
  url.hostname = '127.0.0.1'
  url.port = String(proxyPort)
  const cut = () => {
    for (const socket of open) socket.destroy()
  }
  return {
    url: url.toString(),
    async down(how: 'refuse' | 'drop') {
      mode = 'drop'
      cut()
      if (how === 'refuse') await new Promise<void>((resolve) => server.close(() => resolve()))
    },
    async up() {
      mode = 'up'
      if (!server.listening) await new Promise<void>((resolve) => server.listen(proxyPort, '127.0.0.1', resolve))
    },
    async close() {
      cut()
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
