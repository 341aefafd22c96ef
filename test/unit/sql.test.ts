import knex from 'knex';
import { describe, expect, it } from 'vitest';
import { isSql, sql, toRaw } from '../../src/db/sql';

// Renders without a connection.
const pg = knex({ client: 'pg' });
const native = (fragment: ReturnType<typeof sql>) => toRaw(pg, fragment).toSQL().toNative();

describe('sql fragments', () => {
  it('binds every interpolated value as a parameter, never as text', () => {
    const evil = "x'); DROP TABLE items; --";
    const f = sql`SELECT * FROM items WHERE name = ${evil} AND id = ${7}`;
    expect(f.text).toBe('SELECT * FROM items WHERE name = ? AND id = ?');
    expect(f.bindings).toEqual([evil, 7]);
    expect(native(f)).toEqual({ sql: 'SELECT * FROM items WHERE name = $1 AND id = $2', bindings: [evil, 7] });
  });

  it('flattens nested fragments with their bindings in place, in order', () => {
    const inner = sql`b = ${2} AND c IN (SELECT id FROM t WHERE d = ${3})`;
    const middle = sql`(${inner}) OR e = ${4}`;
    const outer = sql`WHERE a = ${1} AND ${middle} AND f = ${5} AND ${inner}`;
    expect(outer.text).toBe(
      'WHERE a = ? AND (b = ? AND c IN (SELECT id FROM t WHERE d = ?)) OR e = ? AND f = ? AND b = ? AND c IN (SELECT id FROM t WHERE d = ?)',
    );
    expect(outer.bindings).toEqual([1, 2, 3, 4, 5, 2, 3]);
    expect(native(outer).sql).toBe(
      'WHERE a = $1 AND (b = $2 AND c IN (SELECT id FROM t WHERE d = $3)) OR e = $4 AND f = $5 AND b = $6 AND c IN (SELECT id FROM t WHERE d = $7)',
    );
  });

  it('a fragment changed in the middle does not shift its neighbours', () => {
    const withOne = sql`x = ${'x'}`;
    const withTwo = sql`x = ${'x'} AND y = ${'y'}`;
    const statement = (middle: ReturnType<typeof sql>) => sql`a = ${'a'} AND ${middle} AND z = ${'z'}`;
    expect(statement(withOne).bindings).toEqual(['a', 'x', 'z']);
    expect(statement(withTwo).bindings).toEqual(['a', 'x', 'y', 'z']);
  });

  it('keeps a ? written in SQL text an operator, not a placeholder', () => {
    const f = sql`SELECT ${'{"a":1}'}::jsonb ? 'a' AND ${sql.raw("'{}'::jsonb ?| array['b']")}`;
    expect(f.bindings).toEqual(['{"a":1}']);
    expect(native(f)).toEqual({ sql: `SELECT $1::jsonb ? 'a' AND '{}'::jsonb ?| array['b']`, bindings: ['{"a":1}'] });
  });

  it('binds arrays, null, booleans and dates as one parameter each', () => {
    const when = new Date('2026-01-02T03:04:05Z');
    const f = sql`${[1, 2, 3]}::int[], ${null}, ${true}, ${when}`;
    expect(f.bindings).toEqual([[1, 2, 3], null, true, when]);
    expect(native(f).sql).toBe('$1::int[], $2, $3, $4');
  });

  it('refuses an undefined value instead of shifting the rest', () => {
    expect(() => sql`a = ${undefined as unknown as string}`).toThrow(/undefined/);
  });

  it('takes SQL text only through sql.raw and sql.ident, and a look-alike object as a value', () => {
    expect(sql`SELECT ${sql.ident('s', 'created_at')} FROM ${sql.ident('we"ird')}`.text).toBe(
      'SELECT "s"."created_at" FROM "we""ird"',
    );
    const fake = { text: 'DROP TABLE items', bindings: [] };
    const f = sql`SELECT ${fake as never}`;
    expect(f.text).toBe('SELECT ?');
    expect(isSql(fake)).toBe(false);
    expect(Object.isFrozen(f)).toBe(true);
  });

  it('joins fragments with their bindings', () => {
    const f = sql.join([sql`a = ${1}`, sql`b = ${2}`, sql.raw('c IS NULL')], sql.raw(' AND '));
    expect(f.text).toBe('a = ? AND b = ? AND c IS NULL');
    expect(f.bindings).toEqual([1, 2]);
    expect(sql.join([]).text).toBe('');
  });
});
