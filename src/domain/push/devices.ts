import { badInput, limitReached, notFound } from '../core/errors.ts'
import { parseId } from '../core/ids.ts'
import { LIMITS } from '../core/limits.ts'
import type { App, Viewer } from '../core/app.ts'
import { transact } from '../core/transact.ts'
import { lockUser } from '../../store/users.ts'
import {
  countOtherDevices,
  deleteDevice,
  listDevices,
  upsertDevice,
  type PushDeviceRecord,
  type PushPlatform,
} from '../../store/pushDevices.ts'

/** The characters each platform's tokens are made of: APNs device tokens are hex, FCM and HMS tokens base64url-like with ':' and '.'. */
const TOKEN_ALPHABET: Record<PushPlatform, RegExp> = {
  APNS: /^[0-9a-fA-F]+$/,
  FCM: /^[A-Za-z0-9_:.-]+$/,
  HUAWEI: /^[A-Za-z0-9_:.-]+$/,
}

function checkDevice(platform: PushPlatform, token: string, appId: string | null): void {
  if (token.length < 1 || token.length > LIMITS.pushTokenLength || !TOKEN_ALPHABET[platform].test(token))
    throw badInput(`token must be 1..${LIMITS.pushTokenLength} characters of the ${platform} token alphabet`, 'token')
  if (appId !== null && (appId.length < 1 || appId.length > LIMITS.pushAppIdLength))
    throw badInput(`appId must be 1..${LIMITS.pushAppIdLength} characters`, 'appId')
}

/**
 * Registers a device for push: idempotent per (platform, token); a token another user registered
 * moves to the viewer (the phone changed hands). At most LIMITS.pushDevicesPerUser a user.
 */
export async function registerPushDevice(
  app: App,
  viewer: Viewer,
  input: { platform: PushPlatform; token: string; appId?: string | null },
): Promise<PushDeviceRecord> {
  const appId = input.appId ?? null
  checkDevice(input.platform, input.token, appId)
  return transact(app, async (tx) => {
    await lockUser(tx, viewer.userId)
    if ((await countOtherDevices(tx, viewer.userId, input.platform, input.token)) >= LIMITS.pushDevicesPerUser)
      throw limitReached(`you can have at most ${LIMITS.pushDevicesPerUser} push devices`, LIMITS.pushDevicesPerUser)
    const device = await upsertDevice(tx, {
      userId: viewer.userId,
      platform: input.platform,
      token: input.token,
      appId,
    })
    return { result: device, events: [] }
  })
}

/** False when the id names no device of the viewer's. */
export async function unregisterPushDevice(app: App, viewer: Viewer, id: string): Promise<boolean> {
  return deleteDevice(app.db, viewer.userId, parseId(id, 'PushDevice'))
}

/** node(id) of a PushDevice: the owner's only (else NOT_FOUND). */
export async function requirePushDevice(app: App, viewer: Viewer, id: number): Promise<PushDeviceRecord> {
  const device = (await listDevices(app.db, viewer.userId)).find((d) => d.id === id)
  if (!device) throw notFound('PushDevice')
  return device
}

export const viewerPushDevices = (app: App, viewer: Viewer) => listDevices(app.db, viewer.userId)

/** What Viewer.pushDevices shows of a token: its last characters, enough to tell devices apart. */
export const tokenSuffix = (token: string) => token.slice(-6)
