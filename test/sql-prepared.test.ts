import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedRaw } from '../src/db/prepared';
import { sql } from '../src/db/sql';
import { testApp, type TestApp } from './helpers/app';

// How fragments render is test/unit/sql.test.ts's subject; this is the one case that needs PostgreSQL.
describe('against PostgreSQL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(() => t.close());

  it('a prepared fragment keeps its name across values and binds each in place', async () => {
    const statement = (a: number, b: string) =>
      sql`SELECT ${a}::int AS a, ${sql`${b}::jsonb ? 'k'`} AS has_k, ${[a, a + 1]}::int[] AS list`;
    const first = preparedRaw<{ rows: { a: number; has_k: boolean; list: number[] }[] }>(t.db, statement(1, '{"k":1}'));
    const second = preparedRaw<{ rows: { a: number; has_k: boolean; list: number[] }[] }>(
      t.db,
      statement(5, '{"j":1}'),
    );
    expect(first.toSQL().sql).toBe(second.toSQL().sql);
    expect((await first).rows[0]).toEqual({ a: 1, has_k: true, list: [1, 2] });
    expect((await second).rows[0]).toEqual({ a: 5, has_k: false, list: [5, 6] });
  });
});
