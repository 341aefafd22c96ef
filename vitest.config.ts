import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // the fault tests (real processes, a cluster they stop and start) run in `npm run test:faults`
    exclude: [...configDefaults.exclude, 'test/faults/**'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Two files at a time on the 2-core machines: vitest's default (cores - 1) ran one, and most of
    // a file's time is spent waiting on PostgreSQL or Chromium (the suite: 545 s with one, 411-431 s with two)
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    // a page's answer on a busy 2-core machine can take more than the default second to arrive
    expect: { poll: { timeout: 10_000 } },
  },
});
