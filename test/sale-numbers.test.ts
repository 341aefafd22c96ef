import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type supertest from 'supertest';
import { migrateLatest } from '../src/db/migrate';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem, buildUser, TEST_PASSWORD } from './helpers/factories';
import { buildChargeCode, sessionId, untilSomeoneWaitsOnALock } from './helpers/sales-factories';
import { buildStockedItem, stockOf } from './helpers/inventory-factories';
import { sell } from './helpers/finance-factories';
import { appWithAdmin, NO_FITTING_CLIENT } from './backup-helpers';

// Issue 39: a sale number is issued only when the sale commits, with no gap from a refusal, a
// rollback or a retry, and its n starts again at 1 each UTC day.

let t: TestApp;
let staff: supertest.Agent;
let code: string;
beforeAll(async () => {
  t = await testApp();
  staff = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
  code = (await buildChargeCode(t.db)).code;
});
afterAll(() => t.close());

const utcDay = (offsetDays = 0) =>
  new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10).replaceAll('-', '');
/** n of SALE-<YYYYMMDD>-<n>, checking the date is today's (UTC). */
const numberOf = (saleId: string) => {
  const [, day, n] = /^SALE-(\d{8})-(\d+)$/.exec(saleId)!;
  expect(day).toBe(utcDay());
  return Number(n);
};
const todaysCounter = async (db = t.db) =>
  (await db('sale_number_counters').whereRaw(`day = (now() AT TIME ZONE 'UTC')::date`).first())?.last_number;

async function draft(chargeCode: string, items: { itemId: number; quantity: number }[]): Promise<number> {
  const res = await staff.post('/api/sales/quotes').send({ chargeCode, sessionId: sessionId(), items }).expect(200);
  return res.body.quote.id as number;
}

describe('sale numbers', () => {
  // first in the file: its database has no sale of today yet
  it('refused Process sale attempts (a held code, an unknown code, more than the stock) use no number: the day’s first sale is SALE-<today>-1, whatever yesterday reached', async () => {
    await t.db('sale_number_counters').insert({ day: new Date(Date.now() - 86_400_000), last_number: 41 });
    const item = await buildItem(t.db, { price: '2.00', currentStock: 3 });
    const [held, gone] = [await buildChargeCode(t.db), await buildChargeCode(t.db)];
    const attempts = [
      await draft(held.code, [{ itemId: item.id, quantity: 1 }]),
      await draft(gone.code, [{ itemId: item.id, quantity: 1 }]),
      await draft(code, [{ itemId: item.id, quantity: 4 }]),
    ];
    // what the counter meets when the code changed after the basket was saved
    await t.db('charge_codes').where({ id: held.id }).update({ on_hold: true, hold_reason: 'Audit' });
    await t.db('charge_codes').where({ id: gone.id }).delete();
    const messages = [];
    for (const id of attempts)
      messages.push((await staff.post(`/api/sales/quotes/${id}/process`).expect(400)).body.message);
    expect(messages).toEqual([
      `Charge code '${held.code}' is on hold: Audit`,
      expect.stringMatching(new RegExp(`^Invalid charge code: '${gone.code}' does not exist`)),
      expect.stringMatching(/^Insufficient stock/),
    ]);

    const sold = await staff.post(`/api/sales/quotes/${await draft(code, [{ itemId: item.id, quantity: 1 }])}/process`);
    expect(sold.status).toBe(200);
    expect(sold.body.sale.saleId).toBe(`SALE-${utcDay()}-1`);
    expect(await t.db('sales').pluck('sale_id')).toEqual([`SALE-${utcDay()}-1`]);
    expect(await todaysCounter()).toBe(1);
    expect(
      await t.db('sale_number_counters').whereRaw(`day = (now() AT TIME ZONE 'UTC')::date - 1`).first(),
    ).toMatchObject({ last_number: 41 });
    expect(await stockOf(t.db, item.id)).toBe('2.00');
  });

  it('a sale rolled back after taking its number (an exclusion committed while it waited for its items) gives the number back', async () => {
    const before = numberOf(
      (await sell(staff, code, [{ itemId: (await buildStockedItem(t.db, 5)).id, quantity: 1 }])).saleId,
    );
    const category = await buildCategory(t.db);
    const item = await buildItem(t.db, { categoryId: category.id, currentStock: 5 });
    const racing = await buildChargeCode(t.db);
    const quoteId = await draft(racing.code, [{ itemId: item.id, quantity: 1 }]);
    const blocker = await t.db.transaction();
    await blocker('items').where({ id: item.id }).update({ updated_at: blocker.fn.now() });
    const pending = staff.post(`/api/sales/quotes/${quoteId}/process`).then((r) => r);
    await untilSomeoneWaitsOnALock(t.db);
    await t.db('charge_code_exclusions').insert({ charge_code_id: racing.id, category_id: category.id });
    await blocker.commit();
    const refused = await pending;
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/category restrictions/);
    expect(await todaysCounter()).toBe(before);

    const next = await sell(staff, code, [{ itemId: (await buildStockedItem(t.db, 5)).id, quantity: 1 }]);
    expect(numberOf(next.saleId)).toBe(before + 1);
    expect(await todaysCounter()).toBe(before + 1);
  });

  it('concurrent sales, with refusals among them, take consecutive numbers: none twice, none skipped', async () => {
    const before = (await todaysCounter()) ?? 0;
    const items = await Promise.all(Array.from({ length: 10 }, () => buildStockedItem(t.db, 3)));
    const results = await Promise.all(
      items.flatMap((item) => [
        staff
          .post('/api/sales')
          .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 2 }], vatApplied: true }),
        // more than the stock: refused, whichever of the two runs first
        staff
          .post('/api/sales')
          .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 5 }], vatApplied: true }),
      ]),
    );
    expect(results.map((r) => r.status).sort()).toEqual([...Array(10).fill(201), ...Array(10).fill(400)]);
    const numbers = results
      .filter((r) => r.status === 201)
      .map((r) => numberOf(r.body.sale.saleId as string))
      .sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 10 }, (_, i) => before + 1 + i));
    expect(await todaysCounter()).toBe(before + 10);
  });

  it('every way to make a sale draws on the same counter; an idempotent replay answers its sale without a new number', async () => {
    const before = (await todaysCounter()) ?? 0;
    const item = await buildStockedItem(t.db, 50, { price: '1.00', vatRate: '0' });
    const body = { chargeCode: code, items: [{ itemId: item.id, quantity: 1 }], vatApplied: true };
    const direct = await staff.post('/api/sales').set('Idempotency-Key', `numbers-${sessionId()}`).send(body);
    const replay = await staff
      .post('/api/sales')
      .set('Idempotency-Key', direct.request.getHeader('Idempotency-Key') as string)
      .send(body);
    expect(replay.body.sale.saleId).toBe(direct.body.sale.saleId);
    const processed = await staff.post(
      `/api/sales/quotes/${await draft(code, [{ itemId: item.id, quantity: 1 }])}/process`,
    );

    const requester = await buildUser(t.db, { role: 'requester' });
    const requestCode = await buildChargeCode(t.db, { authorisedEmails: [requester.email] });
    const asRequester = await t.loginAs(requester);
    const request = await asRequester
      .post('/api/requests')
      .send({ chargeCode: requestCode.code, items: [{ itemId: item.id, quantity: 1 }] })
      .expect(201);
    const fulfilled = await staff.post(`/api/requests/${request.body.id}/fulfil`).expect(200);

    expect([direct.body.sale.saleId, processed.body.sale.saleId, fulfilled.body.saleNumber].map(numberOf)).toEqual([
      before + 1,
      before + 2,
      before + 3,
    ]);
    expect(await todaysCounter()).toBe(before + 3);
  });
});

describe.skipIf(NO_FITTING_CLIENT)('sale numbers across a restore', () => {
  it('after restoring an older backup the next sale continues after the last number issued, not one the backup would issue again', async () => {
    const { app, admin, adminEmail } = await appWithAdmin();
    const item = await buildStockedItem(app.db, 20);
    const chargeCode = (await buildChargeCode(app.db)).code;
    const sellOne = async () => numberOf((await sell(admin, chargeCode, [{ itemId: item.id, quantity: 1 }])).saleId);
    expect(await sellOne()).toBe(1);
    const { filename } = (await admin.post('/api/backups').expect(201)).body;
    expect([await sellOne(), await sellOne()]).toEqual([2, 3]);

    await admin.post(`/api/backups/${filename}/restore`).expect(200);
    await admin.post('/api/auth/login').send({ email: adminEmail, password: TEST_PASSWORD }).expect(200);
    expect(await app.db('sales').pluck('sale_id')).toEqual([`SALE-${utcDay()}-1`]);
    expect(await sellOne()).toBe(4);
    expect(await todaysCounter(app.db)).toBe(4);
  });

  it('a backup made before sale numbers had counters: the restore still issues none again', async () => {
    const { app, admin, adminEmail } = await appWithAdmin();
    const item = await buildStockedItem(app.db, 20);
    const chargeCode = (await buildChargeCode(app.db)).code;
    const sellOne = async () => numberOf((await sell(admin, chargeCode, [{ itemId: item.id, quantity: 1 }])).saleId);
    expect([await sellOne(), await sellOne()]).toEqual([1, 2]);
    // the database as it was before the counters' migration: numbers from sale_number_seq
    const migration = '20261128180000_sale_number_counters.ts';
    const { down } = await import('../migrations/20261128180000_sale_number_counters');
    await down(app.db);
    await app.db('knex_migrations').where({ name: migration }).delete();
    const { filename } = (await admin.post('/api/backups').expect(201)).body;
    await migrateLatest(app.db);
    expect(await todaysCounter(app.db)).toBe(2);
    expect([await sellOne(), await sellOne()]).toEqual([3, 4]);

    const restored = await admin.post(`/api/backups/${filename}/restore`).expect(200);
    expect(restored.body.migrationsApplied).toEqual([migration]);
    await admin.post('/api/auth/login').send({ email: adminEmail, password: TEST_PASSWORD }).expect(200);
    expect(await sellOne()).toBe(5);
  });
});
