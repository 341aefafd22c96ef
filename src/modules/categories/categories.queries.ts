import type { Db } from '../../db/knex';
import { sql, type Sql } from '../../db/sql';

/**
 * A category's reference, the read model another module's statement joins: every category as
 * `alias`, with the named columns category_id, category_name, category_description, category_icon,
 * category_color and category_coshh_required (issue 43), which are all a caller reads of it (`JOIN ${categoryRefs('c')} ON c.category_id = ...`).
 * A plain projection, so PostgreSQL plans it as the table itself.
 */
export const categoryRefs = (alias: string): Sql =>
  sql`(SELECT id AS category_id, name AS category_name, description AS category_description, icon AS category_icon,
              color AS category_color, coshh_required AS category_coshh_required FROM categories) ${sql.ident(alias)}`;

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
