import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

/**
 * Webhook secrets: "whsec_" + base64 of 32 random bytes (Standard Webhooks), shown once and stored
 * as AES-256-GCM ciphertext under a key derived from WEBHOOK_SECRET_KEY (or AUTH_SECRET), so a
 * database dump alone does not sign anything.
 */
const PREFIX = 'whsec_'
/** The stored form's version tag: a later key scheme can read old rows by it. */
const VERSION = 'v1'

export const newSecret = () => PREFIX + randomBytes(32).toString('base64')

const keyOf = (keyMaterial: string) => Buffer.from(hkdfSync('sha256', keyMaterial, 'parley', 'webhook secrets', 32))

export function encryptSecret(keyMaterial: string, secret: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', keyOf(keyMaterial), iv)
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
  return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`
}

export function decryptSecret(keyMaterial: string, stored: string): string {
  const raw = Buffer.from(stored.slice(VERSION.length + 1), 'base64')
  const decipher = createDecipheriv('aes-256-gcm', keyOf(keyMaterial), raw.subarray(0, 12))
  decipher.setAuthTag(raw.subarray(12, 28))
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
}
