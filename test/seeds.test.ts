import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USERS } from '../seeds/01_users';
import { runSeeds } from '../src/db/seed';
import { testApp, type TestApp } from './helpers/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t?.close());

describe('seeds/01_users.ts', () => {
  it('creates the demo manager and user through knex seeds, and a second run adds nothing', async () => {
    const run = () => runSeeds(t.db, '01_users.ts');
    await run();
    await run();
    for (const demo of DEMO_USERS) {
      expect(await t.db('users').where({ email: demo.email })).toEqual([expect.objectContaining({ role: demo.role, is_active: true })]);
      await t.request.post('/api/auth/login').send({ email: demo.email, password: demo.password }).expect(200);
    }
  });
});
