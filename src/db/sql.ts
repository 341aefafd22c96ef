import type { Knex } from 'knex';
import type { Db } from './knex';

/** A value sent to PostgreSQL as a bound parameter (an array travels as one array parameter). */
export type SqlValue =
  string | number | bigint | boolean | Date | Buffer | null | readonly (string | number | boolean | null)[];

declare const fragmentBrand: unique symbol;

/**
 * A piece of SQL that carries its own bound values: `text` holds one `?` per entry of `bindings`,
 * in order. Fragments are built only by the `sql` tag and its helpers (a hand-made object is not
 * one), so a fragment's `?` and its values cannot drift apart, and a fragment nested in another
 * keeps its values in its place.
 */
export type Sql = { readonly text: string; readonly bindings: readonly SqlValue[]; readonly [fragmentBrand]: true };

const fragments = new WeakSet<object>();

const fragment = (text: string, bindings: readonly SqlValue[]): Sql => {
  const built = Object.freeze({ text, bindings: Object.freeze([...bindings]) }) as Sql;
  fragments.add(built);
  return built;
};

export const isSql = (value: unknown): value is Sql =>
  typeof value === 'object' && value !== null && fragments.has(value);

/** SQL text written by the code: a `?` in it is PostgreSQL's operator, never a placeholder (escaped for knex). */
const escapePlaceholders = (text: string) => text.replace(/\?/g, '\\?');

/**
 * The one way to compose a statement from pieces: `sql\`SELECT ... WHERE id = ${id} AND ${fragment}\``.
 * An interpolated value becomes a bound parameter (never SQL text); an interpolated fragment is
 * inlined with its bindings at that place. SQL text from elsewhere (identifiers, fixed expressions)
 * only through sql.ident and sql.raw.
 */
export function sql(strings: TemplateStringsArray, ...values: (SqlValue | Sql)[]): Sql {
  let text = escapePlaceholders(strings[0]);
  const bindings: SqlValue[] = [];
  values.forEach((value, index) => {
    if (isSql(value)) {
      text += value.text;
      bindings.push(...value.bindings);
    } else {
      if (value === undefined) throw new TypeError(`sql: value ${index} is undefined`);
      text += '?';
      bindings.push(value);
    }
    text += escapePlaceholders(strings[index + 1]);
  });
  return fragment(text, bindings);
}

/** Trusted SQL text from the code (keywords, column lists, fixed expressions), no values. */
sql.raw = (text: string): Sql => fragment(escapePlaceholders(text), []);

/** A quoted identifier, e.g. sql.ident('s', 'created_at') is "s"."created_at". */
sql.ident = (...parts: string[]): Sql => {
  if (parts.length === 0 || parts.some((p) => p.length === 0)) throw new TypeError('sql.ident: empty identifier');
  return sql.raw(parts.map((p) => `"${p.replace(/"/g, '""')}"`).join('.'));
};

/** Fragments joined by a separator (a comma by default). */
sql.join = (parts: readonly Sql[], separator: Sql = sql.raw(', ')): Sql =>
  parts.reduce<Sql | undefined>((joined, part) => (joined ? sql`${joined}${separator}${part}` : part), undefined) ??
  sql.raw('');

/** The fragment as a knex raw on db (a knex instance or a transaction), its values bound in order. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the default of knex's own raw()
export function toRaw<T = any>(db: Db, statement: Sql): Knex.Raw<T> {
  return db.raw<T>(statement.text, statement.bindings as Knex.RawBinding[]);
}
