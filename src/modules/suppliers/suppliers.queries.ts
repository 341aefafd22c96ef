import type { Db } from '../../db/knex';
import { sql, type Sql } from '../../db/sql';

/**
 * A supplier's reference, the read model another module's statement joins: every supplier as
 * `alias`, with the named columns supplier_id and supplier_name, which are all a caller reads of it.
 * A plain projection, so PostgreSQL plans it as the table itself.
 */
export const supplierRefs = (alias: string): Sql =>
  sql`(SELECT id AS supplier_id, name AS supplier_name FROM suppliers) ${sql.ident(alias)}`;

/** Whether the supplier exists. */
export async function supplierExists(db: Db, id: string): Promise<boolean> {
  return (await db('suppliers').where({ id }).first('id')) !== undefined;
}
