// npm run bench:tokens: what verifying a request's token costs, per algorithm, in one run (reported,
// not a target; decision 0274). Each request of a measurement brings a token not seen before, so the
// signature is checked (the remembered-token lookup is measured apart: a client sends the same token
// with every request). The provider's key set is fetched once from a loopback server before timing.
import { createAuthenticator } from '../src/http/auth/authenticate.ts'
import { signToken } from '../src/http/auth/hs256.ts'
import { loadConfig } from '../src/config/env.ts'
import { identityProvider, signingKey, type ProviderAlg } from '../test/support/identityProvider.ts'
import { alternatingSamples, median } from './measure.ts'

const TOKENS_PER_RUN = 1_000
const RUNS = 5
const SECRET = 'bench-secret-that-is-long-enough-for-hs256'

const keys = await Promise.all((['RS256', 'ES256', 'EdDSA'] as ProviderAlg[]).map(signingKey))
const idp = await identityProvider(keys)
const authenticate = createAuthenticator({
  secret: SECRET,
  provider: loadConfig({ AUTH_JWKS_URL: idp.jwksUrl }).AUTH_PROVIDER,
})

type Alg = 'HS256' | ProviderAlg
const algs: Alg[] = ['HS256', 'RS256', 'ES256', 'EdDSA']
let minted = 0
const mint = (alg: Alg) => {
  const handle = `bench-${++minted}`
  return alg === 'HS256'
    ? signToken(SECRET, handle)
    : idp.mint(
        keys.find((k) => k.alg === alg)!,
        { sub: handle },
      )
}

/** Tokens for every run and warm-up, minted before any timing. */
const fresh = new Map<Alg, string[][]>()
for (const alg of algs)
  fresh.set(
    alg,
    await Promise.all(
      Array.from({ length: RUNS + 1 }, () => Promise.all(Array.from({ length: TOKENS_PER_RUN }, () => mint(alg)))),
    ),
  )
// Loads the key set, so no fetch falls inside a measurement.
await authenticate(`Bearer ${await mint('RS256')}`)

/** µs per authentication of `tokens`, one after another as requests on one core would be. */
async function perRequest(tokens: string[]): Promise<number> {
  const started = performance.now()
  for (const token of tokens) await authenticate(`Bearer ${token}`)
  return ((performance.now() - started) * 1000) / tokens.length
}

const round = new Map<Alg, number>(algs.map((alg) => [alg, 0]))
const samples = await alternatingSamples(
  RUNS,
  algs.map((alg) => () => {
    const run = round.get(alg)!
    round.set(alg, run + 1)
    return perRequest(fresh.get(alg)![run]!)
  }),
  { reverseEveryOther: true },
)
const same = Array.from({ length: TOKENS_PER_RUN }, () => fresh.get('RS256')![0]![0]!)
const rememberedRuns: number[] = []
for (let i = 0; i < RUNS; i++) rememberedRuns.push(await perRequest(same))
const remembered = median(rememberedRuns)

const hs256 = median(samples[0]!)
console.log('| token | µs per request (signature checked) | × HS256 | verifications/s on one core |')
console.log('|---|---|---|---|')
algs.forEach((alg, i) => {
  const us = median(samples[i]!)
  console.log(`| ${alg} | ${us.toFixed(1)} | ${(us / hs256).toFixed(2)} | ${Math.round(1e6 / us)} |`)
})
console.log(`| any, remembered (the same token again) | ${remembered.toFixed(2)} | | |`)
console.log(
  `(medians of ${RUNS} alternated runs of ${TOKENS_PER_RUN} tokens each; key set fetches: ${idp.state.jwksRequests})`,
)
await idp.close()
