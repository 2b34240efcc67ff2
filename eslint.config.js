// ESLint for src/, jobs/, test/ and bench/: typescript-eslint's type-checked rules where they catch
// real bugs (promises nobody awaits, awaits of non-promises, needless casts). `npm run lint` runs it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', 'bench/data/', 'demo-output/'] },
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
      // Off: with noUncheckedIndexedAccess a `!` states an index proven in range a line above
      // (357 of them: 97 in src/, 212 in test/, 48 in bench/); rewriting each as a check adds a
      // branch no input can reach.
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
    // bullmq and ioredis are loaded by require (src/cjsPackages.ts): an ES import of either makes
    // Node parse the whole package again for its export names, ~200 ms CPU at every command's start.
    files: ['src/**/*.ts', 'jobs/**/*.ts'],
    rules: {
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
