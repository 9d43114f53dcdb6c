// Lint rules that keep Herald's boundaries true (ARCHITECTURE.md): packages are reached through
// their entry points, Prisma and the pg pool stay inside packages/database, no app imports
// another app, the worker never loads Prisma, and OpenTelemetry is loaded only by the tracing
// facade's SDK file. Formatting is Prettier's (no style rules here).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const deepImports = {
  group: ['@herald/*/dist', '@herald/*/dist/*', '@herald/*/src', '@herald/*/src/*'],
  message: "Import a package through its entry points ('@herald/database', '@herald/database/queue', '@herald/database/testing').",
};
const databaseDrivers = {
  group: ['@prisma/*', 'pg', 'pg-*', '**/generated/prisma', '**/generated/prisma/*'],
  message: "Prisma and the pg pool are packages/database's own: use a repository.",
};
const otherApps = {
  group: [
    '@herald/api',
    '@herald/api/*',
    '@herald/worker',
    '@herald/worker/*',
    '@herald/cli',
    '@herald/cli/*',
    '**/apps/*/src/*',
    '../../*/src/*',
    '../../*/test/*',
  ],
  message: 'No app imports another app: shared code lives in packages/.',
};
const restrict = (...patterns) => ['error', { patterns }];
/**
 * Without OTEL_EXPORTER_OTLP_ENDPOINT nothing of OpenTelemetry is loaded (PRODUCT.md §16):
 * only otel-tracing.ts imports it, and the facade loads that file lazily. A rule of its own, so
 * the per-folder no-restricted-imports below need not repeat it.
 */
const openTelemetry = [
  'error',
  {
    patterns: [
      {
        group: ['@opentelemetry/*'],
        allowTypeImports: true,
        message: "OpenTelemetry is loaded only when traces are on: use HeraldTracing from '@herald/runtime'.",
      },
    ],
  },
];
/** Exact module names (a pattern would also match their subpaths). */
const restrictWithNames = (paths, ...patterns) => ['error', { paths, patterns }];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/generated/**', '**/coverage/**', '.herald/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Test code reads JSON answers whose shape the assertions check.
      '@typescript-eslint/no-explicit-any': 'off',
      'no-restricted-imports': restrict(deepImports, databaseDrivers, otherApps),
      '@typescript-eslint/no-restricted-imports': openTelemetry,
    },
  },
  {
    // The SDK behind the tracing facade, which loads this file only when an OTLP endpoint is set.
    files: ['packages/runtime/src/tracing/otel-tracing.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': 'off' },
  },
  {
    // Repositories store and return outcomes; services decide and build the API's errors.
    files: ['packages/database/**'],
    rules: {
      'no-restricted-imports': restrict(deepImports, {
        group: ['@herald/contracts', '@herald/contracts/*'],
        message: 'Repositories return outcomes; the API contracts and their errors are the services’ to use.',
      }),
    },
  },
  {
    // A test reads what it asserts on through @herald/database/testing's queryDatabase.
    files: ['apps/*/test/**'],
    rules: { 'no-restricted-imports': restrict(deepImports, databaseDrivers, otherApps) },
  },
  {
    // The worker never loads Prisma: only the database package's queue entry. (Its tests set up
    // data through the repositories of the main entry, and read it back through the testing one.)
    files: ['apps/worker/src/**'],
    rules: {
      'no-restricted-imports': restrictWithNames(
        [{ name: '@herald/database', message: "The worker never loads Prisma: import '@herald/database/queue'." }],
        deepImports,
        databaseDrivers,
        otherApps,
      ),
    },
  },
  {
    // The bench's baselines talk to PostgreSQL and HTTP bare, by design.
    files: ['bench/**'],
    rules: { 'no-restricted-imports': restrict(deepImports, otherApps) },
  },
  {
    // @herald/client is installed on its own by Herald's users: it reaches no other package of
    // the workspace (its types come from the api's OpenAPI document, generated at build time).
    files: ['packages/client/**'],
    rules: {
      'no-restricted-imports': restrict(deepImports, databaseDrivers, otherApps, {
        group: ['@herald/*', '!@herald/client'],
        message: '@herald/client stands alone: its users install it without the rest of Herald.',
      }),
    },
  },
  {
    // deploy/'s specs stand where an operator's cluster would: they create the empty database a
    // new installation starts from (pg, bare) and run the apps only as processes, never import them.
    files: ['deploy/**'],
    rules: { 'no-restricted-imports': restrict(deepImports, otherApps) },
  },
  {
    // The console runs in the browser (its test/ and scripts/ in Node). Its schedule preview takes
    // the retry policy straight from packages/core's source file, and its filter editor the
    // subscription-filter checker: those files import nothing outside core/src/filters, so the
    // browser gets the very functions the worker and the api use (see apps/console/README.md).
    files: ['apps/console/**'],
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    rules: {
      'no-restricted-imports': restrict(
        {
          regex: '^@herald/(?!core/src/(retry/retry-policy|filters/subscription-filter)$)[^/]+/(dist|src)(/.*)?$',
          message: deepImports.message,
        },
        otherApps,
      ),
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
