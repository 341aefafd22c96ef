import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Files that need modules loaded afresh: the OpenAPI naming test records schema names as their modules
 * load; the event presenters' test checks a webhook payload in a process where no app was built.
 */
const FRESH_MODULES = ['test/openapi.test.ts', 'test/event-presenters.test.ts'];

/** The PostgreSQL of the run: only the tiers that use a database start it, so the unit tier costs nothing of it. */
const DATABASE_SETUP = ['test/global-setup.ts'];

/** In every file of the tiers whose app runs in the test's process: a warning pg emits fails the test (issue 39). */
const APP_SETUP = ['test/helpers/pg-warnings.ts'];

/**
 * Files that start MCP test runs of their own: left out of a suite that such a run started (its child
 * vitest has STORES_MCP_TEST_RUN set, src/modules/mcp-runs/mcp-runs.vitest.ts), so runs do not nest.
 */
const STARTS_RUNS = process.env.STORES_MCP_TEST_RUN ? ['test/mcp-runs.test.ts'] : [];

export default defineConfig({
  test: {
    pool: 'forks',
    // Three files at a time on the 2-core machines: most of a file's time waits on PostgreSQL or
    // Chromium. With the back-office page tests the suite took 749 s with two workers and 568 s with
    // three; four ran slower than three (Chromiums competing for the cores).
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    // a page's answer on a busy 2-core machine can take more than the default second to arrive
    expect: { poll: { timeout: 10_000 } },
    // The tiers (`npm run test:unit`, `test:api`, `test:browser`; `npm test` runs them all). The fault
    // tests (real processes, a cluster they stop and start) run in `npm run test:faults`.
    projects: [
      // pure code: no database, no app, no browser; nothing to reset between files, so shared modules,
      // and threads, which start quicker than processes
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false, pool: 'threads' } },
      {
        extends: true,
        test: {
          name: 'api',
          include: ['test/*.test.ts'],
          exclude: [...configDefaults.exclude, ...FRESH_MODULES, ...STARTS_RUNS],
          globalSetup: DATABASE_SETUP,
          setupFiles: APP_SETUP,
          // each file has its own database and app; sharing the loaded modules saves importing the app per file
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'api-fresh', include: FRESH_MODULES, globalSetup: DATABASE_SETUP, setupFiles: APP_SETUP },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          include: ['test/pages/**/*.test.ts'],
          globalSetup: DATABASE_SETUP,
          setupFiles: APP_SETUP,
          // shared modules, as for the API files, and so one Chromium per worker (test/helpers/browser.ts)
          isolate: false,
        },
      },
    ],
  },
});
