import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../src/auth/passwords';
import { TEST_PASSWORD_HASH_COST } from '../src/config';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { buildStockedItem, stockOf } from './helpers/inventory-factories';
import { buildChargeCode, sessionId } from './helpers/sales-factories';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe('setting chargeCodes.holdRole', () => {
  it('unset, any user places and lifts a hold and changes exclusions, as the spec has it', async () => {
    const code = await buildChargeCode(t.db);
    const category = await buildCategory(t.db);
    const user = await t.loginAs(await buildUser(t.db));
    await user
      .patch(`/api/chargecodes/${code.code}/hold`)
      .send({ onHold: true, holdReason: 'Query from finance' })
      .expect(200);
    await user.post(`/api/chargecodes/${code.code}/exclusions`).send({ categoryId: category.id }).expect(201);
    expect(await t.db('charge_codes').where({ id: code.id }).first()).toMatchObject({
      on_hold: true,
      hold_reason: 'Query from finance',
    });
  });

  it('set to manager: a user is refused with 403 and nothing changes; a manager and an admin pass', async () => {
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    await admin
      .put('/api/settings/chargeCodes.holdRole')
      .send({ value: { role: 'manager' } })
      .expect(200);
    try {
      const code = await buildChargeCode(t.db);
      const category = await buildCategory(t.db);
      const user = await t.loginAs(await buildUser(t.db));
      const refused = await user
        .patch(`/api/chargecodes/${code.code}/hold`)
        .send({ onHold: true, holdReason: 'No' })
        .expect(403);
      expect(refused.body).toEqual({
        message: 'Holds and exclusions of charge codes require the manager role (setting chargeCodes.holdRole)',
      });
      await user.post(`/api/chargecodes/${code.code}/exclusions`).send({ categoryId: category.id }).expect(403);
      await user.delete(`/api/chargecodes/${code.code}/exclusions/${category.id}`).expect(403);
      expect(await t.db('charge_codes').where({ id: code.id }).first()).toMatchObject({ on_hold: false });
      expect(await t.db('charge_code_exclusions').where({ charge_code_id: code.id })).toEqual([]);

      const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
      await manager
        .patch(`/api/chargecodes/${code.code}/hold`)
        .send({ onHold: true, holdReason: 'Overspent' })
        .expect(200);
      await manager.post(`/api/chargecodes/${code.code}/exclusions`).send({ categoryId: category.id }).expect(201);
      await admin.patch(`/api/chargecodes/${code.code}/hold`).send({ onHold: false }).expect(200);
      // reading stays open to every user
      await user.get(`/api/chargecodes/${code.code}/exclusions`).expect(200);
    } finally {
      await admin
        .put('/api/settings/chargeCodes.holdRole')
        .send({ value: { role: 'user' } })
        .expect(200);
    }
  });
});

describe('PUT /api/settings/{key} for the settings the service reads', () => {
  it('400 naming the field for a value of the wrong shape; the stored value is unchanged', async () => {
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    for (const [key, value, field] of [
      ['chargeCodes.holdRole', { role: 'boss' }, 'value.role'],
      ['chargeCodes.holdRole', { role: 'manager', extra: 1 }, 'value'],
      ['chargeCodes.requirePin', { enabled: 'yes' }, 'value.enabled'],
      ['chargeCodes.requireAuthorisedUser', { enabled: true, extra: 1 }, 'value'],
    ] as const) {
      const before = await t.db('settings').where({ key }).first();
      const res = await admin.put(`/api/settings/${key}`).send({ value }).expect(400);
      expect(
        res.body.errors.map((e: { field: string }) => e.field),
        key,
      ).toEqual([field]);
      expect(await t.db('settings').where({ key }).first()).toEqual(before);
    }
    // any other key still takes any object
    await admin
      .put('/api/settings/stores.banner')
      .send({ value: { text: 'Closed on Friday' } })
      .expect(200);
  });
});

const PIN = '2468';
const pinHash = hashPassword(PIN, TEST_PASSWORD_HASH_COST);

async function setPolicy(key: 'chargeCodes.requirePin' | 'chargeCodes.requireAuthorisedUser', enabled: boolean) {
  const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
  await admin.put(`/api/settings/${key}`).send({ value: { enabled } }).expect(200);
}

async function codeWithPin() {
  const code = await buildChargeCode(t.db);
  await t
    .db('charge_codes')
    .where({ id: code.id })
    .update({ pin_hash: await pinHash });
  return code;
}

async function codeWithAuthorisedUser(email: string) {
  const code = await buildChargeCode(t.db);
  await t
    .db('charge_code_authorised_users')
    .insert({ charge_code_id: code.id, user_name: 'Dr Grace', email, department: 'Chemistry' });
  return code;
}

type SaleExtras = { pin?: string; recipient?: { deliveredTo: string; deliveredToEmail?: string } };
type SalePath = (
  agent: supertest.Agent,
  code: string,
  itemId: number,
  extras?: SaleExtras,
) => Promise<supertest.Response>;

const viaQuote: SalePath = async (agent, code, itemId, extras = {}) => {
  const saved = await agent
    .post('/api/sales/quotes')
    .send({ chargeCode: code, items: [{ itemId, quantity: 1 }], sessionId: sessionId() })
    .expect(200);
  return agent.post(`/api/sales/quotes/${saved.body.quote.id}/process`).send(extras);
};
const direct: SalePath = async (agent, code, itemId, extras = {}) =>
  agent.post('/api/sales').send({ chargeCode: code, items: [{ itemId, quantity: 1 }], ...extras });
const SALE_PATHS = [
  ['processing a quote', viaQuote, 200],
  ['a direct sale', direct, 201],
] as const;

async function answered(response: Promise<supertest.Response>, status: number): Promise<supertest.Response> {
  const res = await response;
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  return res;
}

async function expectNothingSold(code: string, itemId: number) {
  expect(await stockOf(t.db, itemId)).toBe('10.00');
  expect(await t.db('sales').where({ charge_code: code })).toEqual([]);
}

describe('settings chargeCodes.requirePin and chargeCodes.requireAuthorisedUser unset', () => {
  it.each(SALE_PATHS)(
    '%s on a code with a PIN and authorised users needs neither, as the spec has it; a PIN given is ignored',
    async (_path, sell, status) => {
      const code = await codeWithPin();
      await t.db('charge_code_authorised_users').insert({
        charge_code_id: code.id,
        user_name: 'Dr Grace',
        email: 'grace@example.ac.uk',
        department: 'Chemistry',
      });
      const item = await buildStockedItem(t.db, 10);
      const agent = await t.loginAs(await buildUser(t.db));
      await answered(sell(agent, code.code, item.id), status);
      await answered(
        sell(agent, code.code, item.id, {
          pin: 'wrong',
          recipient: { deliveredTo: 'Someone', deliveredToEmail: 'someone@example.ac.uk' },
        }),
        status,
      );
      expect(await stockOf(t.db, item.id)).toBe('8.00');
    },
  );
});

describe('setting chargeCodes.requirePin on', () => {
  beforeAll(() => setPolicy('chargeCodes.requirePin', true));
  afterAll(() => setPolicy('chargeCodes.requirePin', false));

  describe.each(SALE_PATHS)('%s', (_path, sell, status) => {
    it('400 without the PIN and 400 with a wrong one, selling nothing; the right PIN sells', async () => {
      const code = await codeWithPin();
      const item = await buildStockedItem(t.db, 10);
      const agent = await t.loginAs(await buildUser(t.db));
      expect((await answered(sell(agent, code.code, item.id), 400)).body).toEqual({
        message: `Charge code '${code.code}' requires its PIN`,
      });
      expect((await answered(sell(agent, code.code, item.id, { pin: '1357' }), 400)).body).toEqual({
        message: `Incorrect PIN for charge code '${code.code}'`,
      });
      await expectNothingSold(code.code, item.id);
      expect(await t.db('quotes').whereIn('charge_code', [code.code]).count<{ count: number }[]>('* as count')).toEqual(
        [{ count: sell === viaQuote ? 2 : 0 }],
      );

      const sold = await answered(sell(agent, code.code, item.id, { pin: PIN }), status);
      expect(sold.body.sale.chargeCode).toBe(code.code);
      expect(await stockOf(t.db, item.id)).toBe('9.00');
    });

    it('a code without a PIN sells without one', async () => {
      const code = await buildChargeCode(t.db);
      const item = await buildStockedItem(t.db, 10);
      await answered(sell(await t.loginAs(await buildUser(t.db)), code.code, item.id), status);
    });

    it('429 once the code has taken 5 wrong PINs from one person, even with the right one; right PINs do not count; another person is not blocked', async () => {
      const code = await codeWithPin();
      const item = await buildStockedItem(t.db, 10);
      const agent = await t.loginAs(await buildUser(t.db));
      await answered(sell(agent, code.code, item.id, { pin: PIN }), status);
      for (let i = 0; i < 5; i += 1) await answered(sell(agent, code.code, item.id, { pin: `wrong-${i}` }), 400);
      const refused = await answered(sell(agent, code.code, item.id, { pin: PIN }), 429);
      expect(refused.body.message).toMatch(
        new RegExp(`^Too many incorrect PINs for charge code '${code.code}'; try again in 1[45] minute\\(s\\)$`),
      );
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(800);
      expect(await stockOf(t.db, item.id)).toBe('9.00');
      // another code is not affected
      const other = await codeWithPin();
      await answered(sell(agent, other.code, item.id, { pin: PIN }), status);
      // nor is another person on this code: one person's wrong PINs do not lock the code for everyone
      const colleague = await t.loginAs(await buildUser(t.db));
      await answered(sell(colleague, code.code, item.id, { pin: PIN }), status);
      expect(await stockOf(t.db, item.id)).toBe('7.00');
    });
  });

  it('an Idempotency-Key replay with the right PIN is the same request (the PIN is not part of its stored digest)', async () => {
    const code = await codeWithPin();
    const item = await buildStockedItem(t.db, 10);
    const agent = await t.loginAs(await buildUser(t.db));
    const body = { chargeCode: code.code, items: [{ itemId: item.id, quantity: 1 }] };
    const first = await agent
      .post('/api/sales')
      .set('Idempotency-Key', 'pin-replay')
      .send({ ...body, pin: PIN })
      .expect(201);
    const again = await agent
      .post('/api/sales')
      .set('Idempotency-Key', 'pin-replay')
      .send({ ...body, pin: PIN })
      .expect(201);
    expect(again.body.sale.id).toBe(first.body.sale.id);
    await agent.post('/api/sales').set('Idempotency-Key', 'pin-replay').send(body).expect(400);
    expect(await stockOf(t.db, item.id)).toBe('9.00');
  });
});

describe('setting chargeCodes.requireAuthorisedUser on', () => {
  beforeAll(() => setPolicy('chargeCodes.requireAuthorisedUser', true));
  afterAll(() => setPolicy('chargeCodes.requireAuthorisedUser', false));

  describe.each(SALE_PATHS)('%s', (_path, sell, status) => {
    it('400 without a recipient email or with one not authorised for the code, selling nothing', async () => {
      const code = await codeWithAuthorisedUser('grace@example.ac.uk');
      const item = await buildStockedItem(t.db, 10);
      const agent = await t.loginAs(await buildUser(t.db));
      expect((await answered(sell(agent, code.code, item.id), 400)).body).toEqual({
        message: `Charge code '${code.code}' requires the recipient's email, one of its authorised users`,
      });
      const stranger = { deliveredTo: 'Mallory', deliveredToEmail: 'mallory@example.ac.uk' };
      expect((await answered(sell(agent, code.code, item.id, { recipient: stranger }), 400)).body).toEqual({
        message: `Recipient 'mallory@example.ac.uk' is not an authorised user of charge code '${code.code}'`,
      });
      await expectNothingSold(code.code, item.id);
    });

    it('an authorised recipient, whatever the case of the email, sells and is recorded on the sale', async () => {
      const code = await codeWithAuthorisedUser('Grace.Hopper@Example.ac.uk');
      const item = await buildStockedItem(t.db, 10);
      const agent = await t.loginAs(await buildUser(t.db));
      const recipient = { deliveredTo: 'Grace Hopper', deliveredToEmail: 'grace.hopper@example.AC.UK' };
      const sold = await answered(sell(agent, code.code, item.id, { recipient }), status);
      expect(sold.body.sale).toMatchObject({
        deliveredTo: 'Grace Hopper',
        deliveredToEmail: 'grace.hopper@example.AC.UK',
        deliveredAt: expect.any(String),
      });
      expect(await stockOf(t.db, item.id)).toBe('9.00');
    });
  });

  it("PATCH /api/sales/{id}/recipient: 400 for a recipient not authorised for the sale's code, and the recipient is unchanged", async () => {
    const code = await codeWithAuthorisedUser('grace@example.ac.uk');
    const item = await buildStockedItem(t.db, 10);
    const agent = await t.loginAs(await buildUser(t.db));
    const sold = await answered(
      direct(agent, code.code, item.id, {
        recipient: { deliveredTo: 'Grace', deliveredToEmail: 'grace@example.ac.uk' },
      }),
      201,
    );
    const refused = await agent
      .patch(`/api/sales/${sold.body.sale.id}/recipient`)
      .send({ deliveredTo: 'Mallory', deliveredToEmail: 'mallory@example.ac.uk' })
      .expect(400);
    expect(refused.body).toEqual({
      message: `Recipient 'mallory@example.ac.uk' is not an authorised user of charge code '${code.code}'`,
    });
    expect(await t.db('sales').where({ id: sold.body.sale.id }).first()).toMatchObject({
      delivered_to: 'Grace',
      delivered_to_email: 'grace@example.ac.uk',
    });
    await agent
      .patch(`/api/sales/${sold.body.sale.id}/recipient`)
      .send({ deliveredTo: 'Grace H', deliveredToEmail: 'GRACE@example.ac.uk' })
      .expect(200);
  });
});
