import type { Db } from '../../db/knex';
import { sql, type Sql } from '../../db/sql';

/** The owner's fragment for a cross-module statement: the categories table under the caller's alias, to join. */
export const categoriesAs = (alias: string): Sql => sql`categories ${sql.ident(alias)}`;

/** Whether the category exists (on the caller's transaction when it passes one). */
export async function categoryExists(db: Db, id: number): Promise<boolean> {
  return (await db('categories').where({ id }).first('id')) !== undefined;
}

/** Of these ids, those naming no category. */
export async function missingCategoryIds(db: Db, ids: number[]): Promise<number[]> {
  const unique = [...new Set(ids)];
  const found = new Set<number>(await db('categories').whereIn('id', unique).pluck('id'));
  return unique.filter((id) => !found.has(id));
}

/** Each category's name and buyers (the low-stock digest's addressees), by id. */
export async function categoryBuyers(
  db: Db,
  ids: number[],
): Promise<Map<number, { name: string; buyerEmails: string[] }>> {
  const rows: { id: number; name: string; buyer_emails: string[] }[] = await db('categories')
    .whereIn('id', [...new Set(ids)])
    .select('id', 'name', 'buyer_emails');
  return new Map(rows.map((r) => [r.id, { name: r.name, buyerEmails: r.buyer_emails }]));
}
