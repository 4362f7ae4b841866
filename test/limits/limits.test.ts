import { request as httpRequest } from 'node:http'
import { describe, expect, it } from 'vitest'
import { codes, newUser, testApp } from '../support/harness.ts'
import { startServer } from '../support/server.ts'

describe('request body limits', () => {
  it('refuse a body over the size limit before reading it', async () => {
    const user = await newUser()
    const response = await testApp().server.yoga.fetch('http://parley.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
      body: JSON.stringify({ query: `{ viewer { isOperator } } # ${'x'.repeat(200_000)}` }),
    })
    expect(response.status).toBe(413)
    expect(codes((await response.json()) as never)).toEqual(['BAD_USER_INPUT'])
  })
  it('refuse a body that declares no Content-Length (chunked), however small', async () => {
    const user = await newUser()
    const server = await startServer()
    try {
      const response = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(
          server.url,
          { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` } },
          (res) => {
            let body = ''
            res.on('data', (chunk) => (body += chunk))
            res.on('end', () => resolve({ status: res.statusCode!, body }))
          },
        )
        req.on('error', reject)
        // Two writes without a Content-Length: Node sends them with Transfer-Encoding: chunked.
        req.write('{"query":')
        req.end('"{ viewer { isOperator } }"}')
      })
      expect(response.status).toBe(413)
      expect(codes(JSON.parse(response.body))).toEqual(['BAD_USER_INPUT'])
    } finally {
      await server.close()
    }
  })
})
