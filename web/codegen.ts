import type { CodegenConfig } from '@graphql-codegen/cli'

/** The workbench's typed documents (`graphql()` in web/src: operations.ts, mutations.ts, subscriptions.ts) and Graphcache's schema. */
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['web/src/**/*.ts', '!web/src/gql/**'],
  importExtension: '.ts',
  generates: {
    'web/src/gql/': {
      preset: 'client',
      config: {
        scalars: { DateTime: 'string', SafeInt: 'number', JSON: 'unknown' },
        enumsAsTypes: true,
        useTypeImports: true,
      },
      presetConfig: { fragmentMasking: false },
    },
    'web/src/gql/urql-schema.ts': {
      plugins: ['urql-introspection'],
      config: { includeScalars: false, useTypeImports: true },
    },
  },
}

export default config
