// ESLint flat config, run by `npm run lint`. Formatting is Prettier's (.prettierrc.json): no stylistic rules here.
import js from '@eslint/js'
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript'
import { importX } from 'eslint-plugin-import-x'
import { defineConfig, globalIgnores } from 'eslint/config'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default defineConfig(
  globalIgnores(['src/generated/', 'test/gql/', 'web/src/gql/', 'dist/', 'tmp/', '**/.data/']),
  js.configs.recommended,
  // Type-aware: the TypeScript program of tsconfig.json (src, test, bench, scripts, examples, the root configs).
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Unused names are errors; a leading underscore marks one kept on purpose.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // `any` comes from library boundaries (envelop's execute/subscribe, pg's type parsers, JSON.parse of
      // GraphQL responses in tests); no-explicit-any stays on for the `any` we write ourselves.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // graphql's Kind and OperationTypeNode are enums compared with their string values ('Field', 'query').
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
      // Fires on destructured callbacks declared in method syntax by libraries (Yoga's endResponse, a check's
      // `check`), none of which use `this`.
      '@typescript-eslint/unbound-method': 'off',
      // Pothos plugins extend its types by `declare global { namespace PothosSchemaTypes { … } }`.
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      // async functions without await are how this code satisfies Promise-returning interfaces.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // Imports name their .ts files (allowImportingTsExtensions); the TypeScript resolver follows them.
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.json' })],
    },
    rules: { 'import-x/no-cycle': 'error' },
  },
)
