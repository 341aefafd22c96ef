import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';

// Issue 44: PostgreSQL 15 to 18 are supported; `.ci/run` runs this tier on the embedded 15 and
// again with TEST_PG_MAJOR=17 (.ci/pg17). This file proves which one it ran on.

/** the major the run was asked for: TEST_PG_MAJOR, or the embedded default when no server is given */
const EXPECTED_MAJOR = process.env.TEST_PG_MAJOR ?? (process.env.TEST_DATABASE_URL ? undefined : '15');

describe('the PostgreSQL the tier runs on', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(() => t.close());

  it('GET /api/health shows the primary’s version, the major TEST_PG_MAJOR asks for', async () => {
    const res = await t.request.get('/api/health').expect(200);
    const { rows } = await t.db.raw<{ rows: { server_version_num: string }[] }>('SHOW server_version_num');
    const major = String(Math.floor(Number(rows[0].server_version_num) / 10_000));
    expect(res.body.primary.serverVersion).toMatch(new RegExp(`^${major}\\.\\d+`));
    if (EXPECTED_MAJOR) expect(major).toBe(EXPECTED_MAJOR);
  });
});
