import type { Db } from '../../db/knex';

/** Whether the sale (by its record id) exists (a note's reference). */
export async function saleExists(db: Db, id: number): Promise<boolean> {
  return (await db('sales').where({ id }).first('id')) !== undefined;
}

/** How many sales are on the charge code (a code in use is never deleted). */
export async function salesOnChargeCode(db: Db, code: string): Promise<number> {
  const [{ count }] = await db('sales').where({ charge_code: code }).count<{ count: number }[]>('* as count');
  return count;
}
