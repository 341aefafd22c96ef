import type { Knex } from 'knex';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../src/db/knex';
import { transaction } from '../src/db/transaction';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { buildChargeCode, grantPermission, sessionId, untilSomeoneWaitsOnALock } from './helpers/sales-factories';
import { buildStockedItem, movementsOf, stockOf } from './helpers/inventory-factories';

// Every connection of this file's database gives up on a row lock after 300 ms (55P03), so a
// transaction that meets a lock held by another connection is rolled back and retried quickly.
let t: TestApp;
let holder: Knex;
let user: supertest.Agent;
let code: string;
let categoryId: number;
beforeAll(async () => {
  t = await testApp();
  const admin = createDb(t.databaseUrl, 1);
  const { rows } = await admin.raw('SELECT current_database() AS name');
  await admin.raw(`ALTER DATABASE "${rows[0].name}" SET lock_timeout = '300ms'`);
  await admin.destroy();
  // opened after the ALTER: the app's pool has no connection yet, so all of them take the setting
  holder = createDb(t.databaseUrl, 2);
  const u = await buildUser(t.db, { role: 'user' });
  user = await t.loginAs(u);
  code = (await buildChargeCode(t.db)).code;
  categoryId = (await buildCategory(t.db)).id;
});
afterAll(async () => {
  await holder.destroy();
  await t.close();
});

/** Holds a row lock on the item (another transaction's SELECT ... FOR UPDATE) until release() is called. */
async function holdItemLock(itemId: number): Promise<{ release: () => Promise<void> }> {
  const trx = await holder.transaction();
  await trx.raw('SELECT id FROM items WHERE id = ? FOR UPDATE', [itemId]);
  return {
    release: async () => {
      await trx.commit();
    },
  };
}

const salesOf = (itemId: number) => t.db('sale_items').where({ item_id: itemId }).select('sale_id');

describe('database busy (lock timeout) on POST /api/sales', () => {
  it('201 once the lock is released within the retries: one sale, stock moved once', async () => {
    const item = await buildStockedItem(t.db, 5, { categoryId, price: '2.00' });
    const lock = await holdItemLock(item.id);
    const answered = user
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 2 }], vatApplied: false })
      .then((r) => r);
    await untilSomeoneWaitsOnALock(t.db);
    // the first attempt times out after 300 ms (55P03); release before the second one gives up
    await new Promise((r) => setTimeout(r, 350));
    await lock.release();
    const res = await answered;
    expect(res.status).toBe(201);
    expect(res.body.sale).toMatchObject({ totalAmount: '4.00', status: 'completed' });
    expect(await salesOf(item.id)).toHaveLength(1);
    expect(await stockOf(t.db, item.id)).toBe('3.00');
    const movements = await movementsOf(t.db, item.id);
    expect(movements.map((m) => [m.type, m.quantity, m.new_stock])).toEqual([
      ['in', '5.00', '5.00'],
      ['out', '-2.00', '3.00'],
    ]);
    expect(movements[1].reference_id).toBe(res.body.sale.saleId);
  });

  it('a sale retried after it took its number gives the number back: the retry takes the same one, no gap (issue 39)', async () => {
    const item = await buildStockedItem(t.db, 5, { categoryId, price: '2.00' });
    // another transaction holds, uncommitted, a sale with the number this one is to take next: the first
    // attempt takes the number, meets that row on writing its sale, and is rolled back after 300 ms (55P03)
    const blocker = await holder.transaction();
    const {
      rows: [{ next }],
    } = await blocker.raw<{ rows: { next: string }[] }>(
      `SELECT 'SALE-' || to_char(d, 'YYYYMMDD') || '-' ||
              (coalesce((SELECT last_number FROM sale_number_counters WHERE day = d), 0) + 1) AS next
         FROM (SELECT (now() AT TIME ZONE 'UTC')::date AS d) today`,
    );
    await blocker('sales').insert({
      sale_id: next,
      charge_code: code,
      subtotal_amount: 0,
      vat_amount: 0,
      total_amount: 0,
    });
    const answered = user
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 1 }], vatApplied: false })
      .then((r) => r);
    // released once a later attempt (a transaction of its own, so another start) waits on the row
    const waiting = async () =>
      (
        await t.db.raw<{ rows: { xact_start: Date }[] }>(
          `SELECT xact_start FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
        )
      ).rows.map((row) => row.xact_start.getTime());
    let first: number | undefined;
    for (let polls = 0; polls < 2000; polls += 1) {
      const starts = await waiting();
      first ??= starts[0];
      if (first !== undefined && starts.some((start) => start !== first)) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    await blocker.rollback();
    const res = await answered;
    expect(res.status).toBe(201);
    expect(res.body.sale.saleId).toBe(next);
    expect(await t.db('sales').where({ sale_id: next }).pluck('id')).toEqual([res.body.sale.id]);
    const n = Number(next.split('-')[2]);
    expect(
      (await t.db('sale_number_counters').whereRaw(`day = (now() AT TIME ZONE 'UTC')::date`).first()).last_number,
    ).toBe(n);
  });

  it('503 with Retry-After: 1 when the lock outlasts the retries; nothing written', async () => {
    const item = await buildStockedItem(t.db, 5, { categoryId, price: '2.00' });
    const salesBefore = (await t.db('sales').count<{ count: number }[]>('* as count'))[0].count;
    const lock = await holdItemLock(item.id);
    try {
      const res = await user.post('/api/sales').send({ chargeCode: code, items: [{ itemId: item.id, quantity: 2 }] });
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.body).toEqual({ message: 'The database was busy; nothing was saved — try again' });
    } finally {
      await lock.release();
    }
    expect((await t.db('sales').count<{ count: number }[]>('* as count'))[0].count).toBe(salesBefore);
    expect(await stockOf(t.db, item.id)).toBe('5.00');
    expect(await movementsOf(t.db, item.id)).toHaveLength(1);
  });
});

describe('database busy on the other stock paths', () => {
  it('processing a quote is retried whole: 200 after the lock goes, one sale, the quote gone, stock moved once', async () => {
    const item = await buildStockedItem(t.db, 4, { categoryId, price: '1.00' });
    const quote = await user
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: sessionId(), items: [{ itemId: item.id, quantity: 1 }] })
      .expect(200);
    const quoteId = quote.body.quote.id as number;
    const lock = await holdItemLock(item.id);
    const answered = user.post(`/api/sales/quotes/${quoteId}/process`).then((r) => r);
    await untilSomeoneWaitsOnALock(t.db);
    await new Promise((r) => setTimeout(r, 350));
    await lock.release();
    const res = await answered;
    expect(res.status).toBe(200);
    expect(await salesOf(item.id)).toHaveLength(1);
    expect(await t.db('quotes').where({ id: quoteId })).toHaveLength(0);
    expect(await stockOf(t.db, item.id)).toBe('3.00');
    expect(await movementsOf(t.db, item.id)).toHaveLength(2);
  });

  it('a manual stock change is retried whole: 200 after the lock goes, one movement', async () => {
    const item = await buildStockedItem(t.db, 4, { categoryId, price: '1.00' });
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    const lock = await holdItemLock(item.id);
    const answered = manager
      .post(`/api/items/${item.id}/stock`)
      .send({ type: 'in', quantity: 3, reason: 'Delivery' })
      .then((r) => r);
    await untilSomeoneWaitsOnALock(t.db);
    await new Promise((r) => setTimeout(r, 350));
    await lock.release();
    const res = await answered;
    expect(res.status).toBe(200);
    expect(res.body.item.currentStock).toBe(7);
    expect(await stockOf(t.db, item.id)).toBe('7.00');
    expect((await movementsOf(t.db, item.id)).map((m) => [m.type, m.quantity, m.new_stock])).toEqual([
      ['in', '4.00', '4.00'],
      ['in', '3.00', '7.00'],
    ]);
  });

  it('a refund past the retries is 503 and changes nothing; retried after, it refunds once', async () => {
    const item = await buildStockedItem(t.db, 4, { categoryId, price: '1.00' });
    const sale = await user
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 2 }] })
      .expect(201);
    const saleId = sale.body.sale.id;
    const refunder = await buildUser(t.db, { role: 'manager' });
    await grantPermission(t.db, refunder.id, 'sales.refund');
    const manager = await t.loginAs(refunder);
    const lock = await holdItemLock(item.id);
    try {
      const busy = await manager
        .patch(`/api/sales/${saleId}/refund`)
        .send({ items: [{ itemId: item.id, refundQty: 1 }] });
      expect(busy.status).toBe(503);
      expect(busy.headers['retry-after']).toBe('1');
    } finally {
      await lock.release();
    }
    expect(await stockOf(t.db, item.id)).toBe('2.00');
    expect((await t.db('sales').where({ id: saleId }).first()).status).toBe('completed');
    expect(await t.db('notes').where({ reference_type: 'sale', reference_id: String(saleId) })).toHaveLength(0);
    await manager
      .patch(`/api/sales/${saleId}/refund`)
      .send({ items: [{ itemId: item.id, refundQty: 1 }] })
      .expect(200);
    expect(await stockOf(t.db, item.id)).toBe('3.00');
    expect((await t.db('sale_items').where({ item_id: item.id }).first()).refunded_quantity).toBe('1.00');
  });
});

describe('transaction with retry', () => {
  it('runs the whole transaction again after a deadlock: the write of the failed attempt is not kept', async () => {
    const [a, b] = await Promise.all([
      buildStockedItem(t.db, 1, { categoryId }),
      buildStockedItem(t.db, 1, { categoryId }),
    ]);
    let attempts = 0;
    // attempt 1 locks a, then waits for b, which the other transaction holds while it waits for a: a real deadlock
    const other = holder.transaction();
    const otherTrx = await other;
    await otherTrx.raw('SELECT id FROM items WHERE id = ? FOR UPDATE', [b.id]);
    const work = transaction(t.db, { retry: true }, async (trx) => {
      attempts += 1;
      await trx('items')
        .where({ id: a.id })
        .update({ description: `attempt ${attempts}` });
      if (attempts === 1) await trx.raw(`SET LOCAL lock_timeout = '5s'; SET LOCAL deadlock_timeout = '200ms'`);
      await trx.raw('SELECT id FROM items WHERE id = ? FOR UPDATE', [b.id]);
      return attempts;
    });
    await untilSomeoneWaitsOnALock(t.db);
    // the other never detects the deadlock itself: ours is the victim, of the deadlock or (when the other came to
    // wait after our one deadlock check, on a busy machine) of its lock timeout; either way it is retried
    const otherWait = otherTrx
      .raw(
        `SET LOCAL lock_timeout = '60s'; SET LOCAL deadlock_timeout = '120s'; SELECT id FROM items WHERE id = ${a.id} FOR UPDATE`,
      )
      .then(
        () => otherTrx.commit(),
        async (err) => {
          await otherTrx.rollback().catch(() => undefined);
          throw err;
        },
      );
    const results = await Promise.allSettled([work, otherWait]);
    // our first attempt is the victim; the retry wins after the other commits
    const ours = results[0];
    expect(ours.status).toBe('fulfilled');
    expect(attempts).toBe(2);
    const description = (await t.db('items').where({ id: a.id }).first()).description;
    expect(description).toBe(`attempt ${attempts}`);
  });

  it('gives up after 3 attempts and throws the database error', async () => {
    let attempts = 0;
    const err = await transaction(t.db, { retry: true }, async () => {
      attempts += 1;
      throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
    }).catch((e: unknown) => e);
    expect(attempts).toBe(3);
    expect((err as { code: string }).code).toBe('40P01');
  });

  it('does not retry other errors, nor inside a caller transaction', async () => {
    let attempts = 0;
    await expect(
      transaction(t.db, { retry: true }, async () => {
        attempts += 1;
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(attempts).toBe(1);
    attempts = 0;
    await expect(
      t.db.transaction((trx) =>
        transaction(trx, { retry: true }, async () => {
          attempts += 1;
          throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
        }),
      ),
    ).rejects.toThrow('deadlock');
    expect(attempts).toBe(1);
  });
});

describe('a cancelled statement (57014, as a statement timeout answers)', () => {
  it('503 at once (not retried) with Retry-After: 1; nothing written', async () => {
    const item = await buildStockedItem(t.db, 5, { categoryId });
    const lock = await holdItemLock(item.id);
    let res: Awaited<ReturnType<typeof user.post>>;
    try {
      const answered = user
        .post('/api/sales')
        .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 1 }] })
        .then((r) => r);
      // the sale's statement waits on the lock: cancel it (57014 query_canceled) before its 300 ms lock timeout
      const lockWaiters = async () =>
        (
          await holder.raw<{ rows: { pid: number; xact_start: Date }[] }>(
            `SELECT pid, xact_start FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
          )
        ).rows;
      const rows = await lockWaiters();
      for (let i = 0; i < 100 && rows.length === 0; i += 1) {
        await new Promise((r) => setTimeout(r, 5));
        rows.push(...(await lockWaiters()));
      }
      expect(rows).toHaveLength(1);
      const [cancelled] = rows;
      await holder.raw('SELECT pg_cancel_backend(?)', [cancelled.pid]);
      // not retried: a retry is a new transaction that waits on the lock again (300 ms each) before
      // answering; watch for one until the answer comes (the cancelled one may linger a moment)
      let answeredYet = false;
      const retries = new Set<string>();
      const watching = (async () => {
        while (!answeredYet) {
          for (const waiter of await lockWaiters())
            if (waiter.xact_start > cancelled.xact_start) retries.add(waiter.xact_start.toISOString());
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      res = await answered;
      answeredYet = true;
      await watching;
      expect([...retries]).toEqual([]);
    } finally {
      await lock.release();
    }
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body).toEqual({ message: 'The database was busy; nothing was saved — try again' });
    expect(await salesOf(item.id)).toHaveLength(0);
    expect(await stockOf(t.db, item.id)).toBe('5.00');
    expect(await movementsOf(t.db, item.id)).toHaveLength(1);
  });
});
