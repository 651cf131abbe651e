// Lint: the few rules that catch real bugs here, type-aware (a floating promise is only visible with types).
// Why typescript-eslint rather than Biome: docs/pgx/local-dev/decisions/355-linter-typescript-eslint.md.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/**', 'plugins/**', 'node_modules/**', 'tests/e2e/.cc/**', 'tests/e2e/.copilot-cli*/**', '.tmp/**'],
  },
  {
    files: ['src/**/*.ts', 'tests/**/*.ts', 'bench/**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Unused imports are unused variables to this rule.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // A promise nobody awaits loses its error (an unhandled rejection) and its ordering; `void` says it is meant.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    },
  },
);
