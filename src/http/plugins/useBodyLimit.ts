import { type Plugin } from 'graphql-yoga'

/** Refuses bodies over the limit before they are read (413 with a GraphQL-shaped error). */
export function useBodyLimit(maxBytes: number): Plugin {
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      const length = Number(request.headers.get('content-length') ?? 0)
      const chunked =
        !request.headers.has('content-length') && request.headers.get('transfer-encoding')?.includes('chunked')
      if (length > maxBytes || chunked) {
        const message = chunked
          ? 'request bodies must declare their Content-Length'
          : `request body is larger than ${maxBytes} bytes`
        endResponse(
          new fetchAPI.Response(JSON.stringify({ errors: [{ message, extensions: { code: 'BAD_USER_INPUT' } }] }), {
            status: 413,
            headers: { 'content-type': 'application/json' },
          }),
        )
      }
    },
  }
}
