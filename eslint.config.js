// ESLint for src/, jobs/, test/ and bench/: typescript-eslint's type-checked rules where they catch
// real bugs (promises nobody awaits, awaits of non-promises, needless casts). `npm run lint` runs it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // test/helpers/*.mjs: plain node loader hooks (`node --import`), outside the TypeScript project.
  { ignores: ['dist/', 'coverage/', 'bench/data/', 'demo-output/', 'test/helpers/*.mjs'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // With verbatimModuleSyntax `import { type A }` still loads the module; `import type` does not.
      '@typescript-eslint/no-import-type-side-effects': 'error',
      // `_name` marks a value left out on purpose (a destructured field dropped from the rest).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Off for test/ and bench/: a test states what it just set up; expect() is the check. On for
      // src/ and jobs/ (below).
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Off: every hit was an interface member in method syntax handed on as a callback; the code
      // uses closures, not `this`, so the rule only asked for a different declaration style.
      '@typescript-eslint/unbound-method': 'off',
      // Off: an `async` function without `await` is how an implementation of a Promise-returning
      // interface keeps a throw as a rejection.
      '@typescript-eslint/require-await': 'off',
      // Off: its hits were `String(value)` on an `unknown` on purpose (config report, HTML
      // rendering, an abort reason); template literals stay checked by restrict-template-expressions.
      '@typescript-eslint/no-base-to-string': 'off',
      // A `let` a closure reads before its one assignment (a sink wired up later) cannot be a const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Off: the two regexes with control characters look for control characters.
      'no-control-regex': 'off',
    },
  },
  {
    // Named arguments (issue 32): more than four values, or a positional boolean, go in one options
    // object with each field documented (BullMQ's worker options), so a call reads without the signature.
    files: ['src/**/*.ts'],
    rules: { 'max-params': ['error', 4] },
  },
  {
    // bullmq and ioredis are loaded by require (src/cjsPackages.ts): an ES import of either makes
    // Node parse the whole package again for its export names, ~200 ms CPU at every command's start.
    files: ['src/**/*.ts', 'jobs/**/*.ts'],
    rules: {
      // On (issue 32): a `!` lets an `undefined` travel on when its proof breaks. src/ iterates
      // instead of indexing, narrows with the check it already makes, or asks defined() (src/errors.ts),
      // which throws INTERNAL naming what was missing. The `!` left each carries an eslint-disable with
      // its proof: Lua and pipeline reply tuples, regex groups a match has, and per-byte or per-row
      // loops (scanners, acceptCells, the spill codec, the Bloom filter) that index on purpose.
      '@typescript-eslint/no-non-null-assertion': 'error',
      // A chain of conditions reads as if/else, a small named helper or a lookup table (issue 32).
      'no-nested-ternary': 'error',
      // One concern per function (issue 32): a longer one is split into named steps. The exceptions say why where
      // they are (an eslint-disable with its reason): lists that read whole and a scanner's per-character loop.
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      '@typescript-eslint/no-restricted-imports': [
        'error',
        ...['bullmq', 'ioredis'].map((name) => ({
          name,
          allowTypeImports: true,
          message: `values of ${name} come from src/cjsPackages.ts (import type for its types)`,
        })),
      ],
    },
  },
  {
    // Tests read JSON the CLI and the simulator wrote and state its shape with expect(); typing it
    // before asserting it would say the same thing twice.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  { files: ['**/*.js'], extends: [tseslint.configs.disableTypeChecked] },
);
