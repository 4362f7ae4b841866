import { afterEach, beforeEach, expect, vi } from 'vitest'

/** Every console warning or error a client library prints (cache data loss, missing keys, …) fails the test. */
export function failOnConsoleWarnings() {
  let warnings: unknown[][] = []
  beforeEach(() => {
    warnings = []
    for (const level of ['warn', 'error'] as const)
      vi.spyOn(console, level).mockImplementation((...args) => void warnings.push(args))
  })
  afterEach(() => {
    vi.restoreAllMocks()
    expect(warnings).toEqual([])
  })
}

/** A fetch that records the operation name of every HTTP request (POST bodies, or GET query strings). */
export function countingFetch(): { fetch: typeof fetch; requests: string[] } {
  const requests: string[] = []
  const counting: typeof fetch = (input, init) => {
    const sent = init?.body
    if (sent && typeof sent !== 'string') throw new Error('countingFetch reads JSON text bodies only')
    const body = sent
      ? JSON.parse(sent)
      : { operationName: new URL(input instanceof Request ? input.url : input).searchParams.get('operationName') }
    requests.push(body.operationName)
    return fetch(input, init)
  }
  return { fetch: counting, requests }
}
