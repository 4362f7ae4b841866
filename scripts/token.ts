// npm run token -- <handle> [--operator] [--name "Display Name"]
// Prints a JWT signed with AUTH_SECRET (or the development secret in the data folder).
import { parseArgs } from 'node:util'
import { resolveAuthSecret, signToken } from '../src/http/auth/hs256.ts'
import { loadConfig, reportFailure } from '../src/config/env.ts'

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    operator: { type: 'boolean', default: false },
    name: { type: 'string' },
    expires: { type: 'string', default: '30d' },
  },
})
const handle = positionals[0]
if (!handle) {
  console.error('usage: npm run token -- <handle> [--operator] [--name "Display Name"] [--expires 30d]')
  process.exit(2)
}
try {
  const secret = resolveAuthSecret(loadConfig(), (m) => console.error(m))
  if (!secret)
    throw new Error('AUTH_SECRET is not set, so HS256 tokens are off: tokens come from the identity provider')
  console.log(
    await signToken(secret, handle, { operator: values.operator, name: values.name, expiresIn: values.expires }),
  )
} catch (error) {
  reportFailure('cannot mint a token', error)
  process.exit(1)
}
