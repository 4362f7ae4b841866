import pg from 'pg'

/** Runs `work` on a short-lived pg client (administrative statements outside Prisma: create databases, fixtures). */
export async function withPgClient<T>(
  url: string | pg.ClientConfig,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client(typeof url === 'string' ? { connectionString: url } : url)
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}
