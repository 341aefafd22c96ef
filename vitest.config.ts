import { configDefaults, defineConfig } from 'vitest/config';

/** Files that need modules loaded afresh: the OpenAPI naming test records schema names as their modules load. */
const FRESH_MODULES = ['test/openapi.test.ts'];

/**
 * Files that start MCP test runs of their own: left out of a suite that such a run started (its child
 * vitest has STORES_MCP_TEST_RUN set, src/modules/mcp-runs/mcp-runs.vitest.ts), so runs do not nest.
 */
const STARTS_RUNS = process.env.STORES_MCP_TEST_RUN ? ['test/mcp-runs.test.ts'] : [];

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
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
    projects: [
      {
        extends: true,
        test: {
          name: 'shared-modules',
          include: ['test/**/*.test.ts'],
          // the fault tests (real processes, a cluster they stop and start) run in `npm run test:faults`
          exclude: [...configDefaults.exclude, 'test/faults/**', ...FRESH_MODULES, ...STARTS_RUNS],
          // each file has its own database and app; sharing the loaded modules saves importing the app per file
          isolate: false,
        },
      },
      { extends: true, test: { name: 'fresh-modules', include: FRESH_MODULES } },
    ],
  },
});
