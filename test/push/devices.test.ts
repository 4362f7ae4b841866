import { describe, expect, it } from 'vitest'
import { newUsers } from '../support/harness.ts'
import { RegisterPushDevice, UnregisterPushDevice, ViewerPushDevices, apnsToken } from '../support/push.ts'

describe('push devices', () => {
  it('registers idempotently per (platform, token), shows only the token suffix, and unregisters', async () => {
    const [alice] = await newUsers(1)
    const token = apnsToken()
    const first = (await alice!.run(RegisterPushDevice, { platform: 'APNS', token, appId: 'com.example.chat' }))
      .registerPushDevice
    expect(first).toMatchObject({ platform: 'APNS', tokenSuffix: token.slice(-6), appId: 'com.example.chat' })
    const again = (await alice!.run(RegisterPushDevice, { platform: 'APNS', token })).registerPushDevice
    expect(again.id).toBe(first.id)
    expect(again.createdAt).toBe(first.createdAt)
    // The same characters on another platform are another device.
    await alice!.run(RegisterPushDevice, { platform: 'FCM', token })
    const listed = (await alice!.run(ViewerPushDevices)).viewer.pushDevices
    expect(listed.map((d) => d.platform)).toEqual(['APNS', 'FCM'])
    expect(JSON.stringify(listed)).not.toContain(token)

    expect((await alice!.run(UnregisterPushDevice, { id: first.id })).unregisterPushDevice).toBe(true)
    expect((await alice!.run(UnregisterPushDevice, { id: first.id })).unregisterPushDevice).toBe(false)
    expect((await alice!.run(ViewerPushDevices)).viewer.pushDevices.map((d) => d.platform)).toEqual(['FCM'])
  })

  it('moves a token another user registered to the new one (the phone changed hands)', async () => {
    const [alice, bob] = await newUsers(2)
    const token = `fcm-${apnsToken()}:APA91b`
    const hers = (await alice!.run(RegisterPushDevice, { platform: 'FCM', token })).registerPushDevice
    const his = (await bob!.run(RegisterPushDevice, { platform: 'FCM', token })).registerPushDevice
    expect(his.id).toBe(hers.id)
    expect((await alice!.run(ViewerPushDevices)).viewer.pushDevices).toEqual([])
    expect((await bob!.run(ViewerPushDevices)).viewer.pushDevices.map((d) => d.id)).toEqual([his.id])
    // Not hers any more: she cannot remove it.
    expect((await alice!.run(UnregisterPushDevice, { id: his.id })).unregisterPushDevice).toBe(false)
  })

  it('allows 20 devices a user: the 21st is LIMIT_REACHED, a repeat of one of the 20 is not', async () => {
    const [alice] = await newUsers(1)
    const tokens = Array.from({ length: 20 }, apnsToken)
    for (const token of tokens) await alice!.run(RegisterPushDevice, { platform: 'APNS', token })
    const over = await alice!.try(RegisterPushDevice, { platform: 'APNS', token: apnsToken() })
    expect(over.errors?.[0]?.extensions).toMatchObject({ code: 'LIMIT_REACHED', limit: 20 })
    expect((await alice!.try(RegisterPushDevice, { platform: 'APNS', token: tokens[3]! })).errors).toBeUndefined()
    expect((await alice!.run(ViewerPushDevices)).viewer.pushDevices).toHaveLength(20)
  })

  it('refuses tokens outside 1..4096 characters of the platform alphabet and appIds outside 1..255, storing nothing', async () => {
    const [alice] = await newUsers(1)
    const bad: [string, string, string | undefined][] = [
      ['APNS', '', undefined],
      ['APNS', 'not-hex', undefined],
      ['APNS', 'a'.repeat(4097), undefined],
      ['FCM', 'has space', undefined],
      ['HUAWEI', 'emoji😀', undefined],
      ['FCM', 'ok', ''],
      ['FCM', 'ok', 'x'.repeat(256)],
    ]
    for (const [platform, token, appId] of bad) {
      const r = await alice!.try(RegisterPushDevice, { platform: platform as 'APNS', token, appId })
      expect(r.errors?.[0]?.extensions?.code, `${platform} ${token.slice(0, 20)} ${appId}`).toBe('BAD_USER_INPUT')
    }
    expect((await alice!.run(ViewerPushDevices)).viewer.pushDevices).toEqual([])
    // The longest token is accepted (its unique key is a hash, not the 4096 characters).
    const longest = (await alice!.run(RegisterPushDevice, { platform: 'APNS', token: 'f'.repeat(4096) }))
      .registerPushDevice
    expect(longest.tokenSuffix).toBe('ffffff')
  })
})
