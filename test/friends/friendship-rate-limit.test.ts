import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/app.ts'
import { parseRateLimits } from '../../src/config/rateLimits.ts'
import { DEFAULT_SETTINGS } from '../../src/domain/core/settings.ts'
import { createRealtime } from '../../src/realtime/pubsub.ts'
import { codes, newUsers, testApp, type TestUser } from '../support/harness.ts'
import { FriendshipWith, RequestFriendship } from '../support/friends.ts'
import { post, startServer, type TestServer } from '../support/server.ts'

/** Friend requests count against the `mutation` rule like every mutation without a rule of its own. */
let server: TestServer
beforeAll(async () => {
  const settings = { ...structuredClone(DEFAULT_SETTINGS), rateLimits: parseRateLimits('mutation=3/60') }
  server = await startServer(createApp({ db: testApp().db, realtime: createRealtime(), settings }))
})
afterAll(() => server.close())

describe('friend requests under rate limits', () => {
  it('are RATE_LIMITED past the mutation rule, storing nothing', async () => {
    const [asker, ...others] = await newUsers(5)
    const ask = (other: TestUser) => post(server.url, asker!.token, RequestFriendship, { userId: other.id })
    for (const other of others.slice(0, 3)) expect(codes(await ask(other))).toEqual([])
    const refused = await ask(others[3]!)
    expect(codes(refused)).toEqual(['RATE_LIMITED'])
    const state = (await asker!.run(FriendshipWith, { id: others[3]!.id })).node as { viewerFriendship: string }
    expect(state.viewerFriendship).toBe('NONE')
  })
})
