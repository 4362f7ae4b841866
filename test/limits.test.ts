import { request as httpRequest } from 'node:http'
import { describe, expect, it } from 'vitest'
import { codes, newUser, request, testApp } from './support/harness.ts'
import { startServer } from './support/server.ts'

describe('query limits', () => {
  it('accept the deepest path a client needs', async () => {
    const user = await newUser()
    const query = `{ viewer { conversations(first: 5) { edges { node { lastMessage { content {
      ... on ForwardContent { items { content { ... on TextContent { text } } } } } } } } } } }`
    const response = await request(user.token, query)
    expect(response.errors).toBeUndefined()
  })

  it('refuse a 30-level nesting', async () => {
    const user = await newUser()
    let selection = 'id'
    for (let i = 0; i < 14; i++) selection = `conversation { lastMessage { ${selection} } }`
    const response = await request(user.token, `{ node(id: "x") { ... on Message { ${selection} } } }`)
    expect(codes(response)).toContain('BAD_USER_INPUT')
    expect(response.errors![0]!.message).toMatch(/depth|cost/i)
  })

  it('refuse hundreds of aliases', async () => {
    const user = await newUser()
    const aliases = Array.from({ length: 200 }, (_, i) => `a${i}: viewer { isOperator }`).join(' ')
    const response = await request(user.token, `{ ${aliases} }`)
    expect(codes(response)).toContain('BAD_USER_INPUT')
    expect(response.errors![0]!.message).toMatch(/alias/i)
  })

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
        const req = httpRequest(server.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` } }, (res) => {
          let body = ''
          res.on('data', (chunk) => (body += chunk))
          res.on('end', () => resolve({ status: res.statusCode!, body }))
        })
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
