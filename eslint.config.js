import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import prettierConfig from 'eslint-config-prettier';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'coverage/', 'public/vendor/', 'test-screenshots/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // formatting is Prettier's (`npm run lint` checks it): no ESLint rule argues with it
  prettierConfig,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-namespace': 'off',
    },
  },
  {
    // issue 41: more than four arguments are named (an options object), and no cast to never hides a
    // type; where a library fixes a callback's arity, the line says so (eslint-disable-next-line with why)
    files: ['src/**/*.ts'],
    rules: {
      'max-params': ['error', 4],
      'no-restricted-syntax': [
        'error',
        { selector: 'TSAsExpression > TSNeverKeyword', message: "No 'as never': give the value its type." },
      ],
    },
  },
  {
    // the production build script runs on node alone, without tsx
    files: ['scripts/**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    // tools' configuration in CommonJS (dependency-cruiser)
    files: ['*.cjs'],
    languageOptions: { globals: globals.node },
  },
  {
    // the pages' own scripts run in the browser, beside htmx and Chart.js loaded before them
    files: ['public/js/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { ...globals.browser, htmx: 'readonly', Chart: 'readonly' } },
  },
);
