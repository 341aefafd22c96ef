import { afterAll, afterEach, expect } from 'vitest';

/**
 * Issue 39: a setup file of the API and browser tiers (vitest.config.ts), whose app runs in the
 * test's own process. Every warning pg emits there (a deprecation such as "Calling client.query()
 * when the client is already executing a query", which pg 9 makes an error) fails the test it
 * arrived in, or the file when it came outside a test. pg warns of each deprecation once per
 * process, so the first test to meet it is the one that fails.
 */
const PG_WARNING = /\bpg@\d|client\.query\(\)/;

// Setup files run again before each file of a worker that shares modules between files (isolate:
// false): one listener and one list per process.
const seen = globalThis as { pgWarnings?: string[] };
if (!seen.pgWarnings) {
  const list: string[] = [];
  seen.pgWarnings = list;
  process.on('warning', (warning) => {
    if (PG_WARNING.test(warning.message)) list.push(`${warning.name}: ${warning.message}`);
  });
}
const pgWarnings = seen.pgWarnings;

const noPgWarnings = () => expect(pgWarnings.splice(0), 'warnings pg wrote to the server log').toEqual([]);

afterEach(noPgWarnings);
afterAll(noPgWarnings);
