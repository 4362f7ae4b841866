/** The signed-in token, per browser tab (sessionStorage), so two tabs can be two users. */
const KEY = 'parley.token'

export const savedToken = () => sessionStorage.getItem(KEY)

/** Development sign-in by handle: the server mints a token (POST /dev/token; absent in production). */
export async function signIn(handle: string): Promise<string> {
  const response = await fetch('/dev/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ handle }),
  })
  const body = (await response.json()) as { token?: string; error?: string }
  if (!response.ok || !body.token) throw new Error(body.error ?? `sign-in failed (${response.status})`)
  sessionStorage.setItem(KEY, body.token)
  return body.token
}

export function signOut() {
  sessionStorage.removeItem(KEY)
}
