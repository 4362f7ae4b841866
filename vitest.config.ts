import { createRequire } from 'node:module'
import { defineConfig } from 'vitest/config'

const require = createRequire(import.meta.url)

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (main) and ESM (module). Node loads the CJS build for our dependencies;
    // point Vite at the same file so there is one graphql instance.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Files run in parallel against one shared, migrated database; every test creates its own data.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
