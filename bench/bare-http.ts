// Scenario 10's floor: node:http answering a GraphQL POST with no GraphQL server behind it (read the
// body, parse it, answer what `{ __typename }` answers), in its own process. Prints its URL once listening.
import http from 'node:http'
import type { AddressInfo } from 'node:net'

const ANSWER = JSON.stringify({ data: { __typename: 'Query' } })

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    JSON.parse(Buffer.concat(chunks).toString())
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(ANSWER) })
    response.end(ANSWER)
  })
})
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`))
