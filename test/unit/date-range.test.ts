import knex from 'knex';
import { describe, expect, it } from 'vitest';
import { inDateRange, whereInDateRange } from '../../src/lib/date-range';
import { sql, toRaw } from '../../src/db/sql';

// Renders without a connection.
const pg = knex({ client: 'pg' });
const builderRange = (start?: string, end?: string) =>
  whereInDateRange(pg('sales'), 'created_at', start, end).toSQL().toNative();
const statementRange = (start?: string, end?: string) =>
  toRaw(pg, sql.join(inDateRange(sql.raw('s.created_at'), start, end), sql.raw(' AND ')))
    .toSQL()
    .toNative();

describe('an inclusive date range', () => {
  it('takes a plain start date from the start of its UTC day, a plain end date to the end of its UTC day', () => {
    expect(builderRange('2026-03-01', '2026-03-31')).toEqual({
      sql: 'select * from "sales" where "created_at" >= $1 and "created_at" < $2',
      bindings: [new Date('2026-03-01T00:00:00.000Z'), new Date('2026-04-01T00:00:00.000Z')],
    });
  });

  it('ends a plain end date at the next day, across a month, a leap day and a year', () => {
    const endOf = (date: string) => builderRange(undefined, date).bindings[0];
    expect(endOf('2028-02-28')).toEqual(new Date('2028-02-29T00:00:00.000Z'));
    expect(endOf('2028-02-29')).toEqual(new Date('2028-03-01T00:00:00.000Z'));
    expect(endOf('2026-12-31')).toEqual(new Date('2027-01-01T00:00:00.000Z'));
  });

  it('takes timestamps as given, both ends included', () => {
    expect(builderRange('2026-03-01T09:30:00+01:00', '2026-03-01T17:00:00Z')).toEqual({
      sql: 'select * from "sales" where "created_at" >= $1 and "created_at" <= $2',
      bindings: [new Date('2026-03-01T08:30:00.000Z'), new Date('2026-03-01T17:00:00.000Z')],
    });
  });

  it('leaves out an end not given', () => {
    expect(builderRange(undefined, undefined).sql).toBe('select * from "sales"');
    expect(builderRange('2026-03-01').sql).toBe('select * from "sales" where "created_at" >= $1');
    expect(builderRange(undefined, '2026-03-01').sql).toBe('select * from "sales" where "created_at" < $1');
    expect(inDateRange(sql.raw('s.created_at'))).toEqual([]);
  });

  it('gives a composed statement the same conditions as a query builder', () => {
    expect(statementRange('2026-03-01', '2026-03-31')).toEqual({
      sql: 's.created_at >= $1 AND s.created_at < $2',
      bindings: builderRange('2026-03-01', '2026-03-31').bindings,
    });
    expect(statementRange('2026-03-01', '2026-03-31T12:00:00Z').sql).toBe('s.created_at >= $1 AND s.created_at <= $2');
  });
});
