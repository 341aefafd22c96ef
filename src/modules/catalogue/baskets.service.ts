import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { transaction } from '../../db/transaction';
import type { ReferenceCounters } from '../../db/references';
import { sql } from '../../db/sql';

/**
 * Issue 39: a requester's request basket, kept in PostgreSQL (request_baskets, one row per person)
 * rather than in the session, so it follows them from a phone to a desktop and across sign-ins.
 * A basket untouched for BASKET_LIFETIME_DAYS is empty when next read, and the
 * prune-expired-baskets job deletes it.
 */

/** How long a basket no one changes is kept. */
export const BASKET_LIFETIME_DAYS = 30;

/** A line of the request basket: what the catalogue showed when it was added (the request prices it again when made). */
export type BasketLine = {
  itemId: number;
  name: string;
  sku: string;
  price: string;
  categoryId: number | null;
  /** a decimal string, as the API takes it */
  quantity: string;
};

/** The request being put together, until it is submitted. */
export type RequestBasket = { lines: BasketLine[]; chargeCode: string; notes: string; neededBy: string };

type BasketRow = {
  user_id: string;
  lines: BasketLine[];
  charge_code: string;
  notes: string;
  needed_by: string;
  updated_at: Date;
};

export const emptyBasket = (): RequestBasket => ({ lines: [], chargeCode: '', notes: '', neededBy: '' });

const fromRow = (row: BasketRow | undefined): RequestBasket =>
  row ? { lines: row.lines, chargeCode: row.charge_code, notes: row.notes, neededBy: row.needed_by } : emptyBasket();

/** Rows still alive: changed within the lifetime. */
const alive = (db: Db) => db.raw(`now() - make_interval(days => ?)`, [BASKET_LIFETIME_DAYS]);

/** Deletes the baskets untouched for longer than their lifetime (the prune-expired-baskets job). */
export async function pruneExpiredBaskets(db: Db): Promise<number> {
  return db('request_baskets').where('updated_at', '<=', alive(db)).delete();
}

export function basketsService(db: Db) {
  return {
    /** The person's basket: empty when they have none, or theirs was untouched for the lifetime. */
    async get(userId: string): Promise<RequestBasket> {
      const row = await db<BasketRow>('request_baskets')
        .where({ user_id: userId })
        .where('updated_at', '>', alive(db))
        .first();
      return fromRow(row);
    },

    /**
     * Changes the person's basket: `change` edits it in place (and may throw, changing nothing);
     * the row is locked meanwhile, so two devices changing it at once take turns rather than one
     * undoing the other. An expired basket starts empty. Answers what `change` answers.
     */
    async change<T>(userId: string, change: (basket: RequestBasket) => T | Promise<T>): Promise<T> {
      return transaction(db, async (trx: Knex.Transaction) => {
        await trx('request_baskets').insert({ user_id: userId }).onConflict('user_id').ignore();
        const row = await trx<BasketRow>('request_baskets')
          .select('*', trx.raw('updated_at > ? AS alive', [alive(trx)]))
          .where({ user_id: userId })
          .forUpdate()
          .first<(BasketRow & { alive: boolean }) | undefined>();
        const basket = fromRow(row?.alive ? row : undefined);
        const result = await change(basket);
        await trx('request_baskets')
          .where({ user_id: userId })
          .update({
            lines: JSON.stringify(basket.lines),
            charge_code: basket.chargeCode,
            notes: basket.notes,
            needed_by: basket.neededBy,
            updated_at: trx.fn.now(),
          });
        return result;
      });
    },

    /** Empties the person's basket (their request was submitted). */
    async clear(userId: string): Promise<void> {
      await db('request_baskets').where({ user_id: userId }).delete();
    },
  };
}

export type BasketsService = ReturnType<typeof basketsService>;

/** The rows of request baskets that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const basketsReferences: ReferenceCounters = {
  users: [
    {
      table: 'request_baskets',
      column: 'user_id',
      count: (id) => sql`SELECT count(*) FROM request_baskets WHERE user_id = ${id}`,
    },
  ],
};
