import type { Db } from '../../db/knex';
import { sql, type Sql } from '../../db/sql';

/** The owner's fragment for a cross-module statement: the suppliers table under the caller's alias, to join. */
export const suppliersAs = (alias: string): Sql => sql`suppliers ${sql.ident(alias)}`;

/** Whether the supplier exists. */
export async function supplierExists(db: Db, id: string): Promise<boolean> {
  return (await db('suppliers').where({ id }).first('id')) !== undefined;
}
