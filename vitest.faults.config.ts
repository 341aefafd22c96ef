import { defineConfig } from 'vitest/config';

/**
 * `npm run test:faults`: the slow fault tests (issue 16). Each file runs the service as child
 * processes over a PostgreSQL cluster of its own, which it stops, starts and shares; one file
 * at a time, so the timings they measure are not another file's load.
 */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
  },
});
