import type { CodegenConfig } from '@graphql-codegen/cli'

/** Types the operations written with `graphql()` in tests, bench and examples against schema.graphql. */
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['test/**/*.ts', 'bench/**/*.ts', '!test/gql/**', '!bench/peers/**'],
  ignoreNoDocuments: true,
  // ESM with NodeNext resolution: generated imports carry their extension.
  importExtension: '.ts',
  generates: {
    'test/gql/': {
      preset: 'client',
      config: {
        scalars: { DateTime: 'string', SafeInt: 'number', JSON: 'unknown' },
        enumsAsTypes: true,
        useTypeImports: true,
      },
      presetConfig: { fragmentMasking: false },
    },
    // Apollo's InMemoryCache and urql's Graphcache need the union and interface members (docs/clients.md).
    'test/gql/possible-types.ts': { plugins: ['fragment-matcher'] },
    'test/gql/urql-schema.ts': {
      plugins: ['urql-introspection'],
      config: { includeScalars: false, useTypeImports: true },
    },
  },
}

export default config
