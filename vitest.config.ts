import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // the fault tests (real processes, a cluster they stop and start) run in `npm run test:faults`
    exclude: [...configDefaults.exclude, 'test/faults/**'],
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
  },
});
