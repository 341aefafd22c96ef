import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { buildStockedItem } from './helpers/inventory-factories';
import { buildChargeCode } from './helpers/sales-factories';
import { setItemHazards } from './helpers/sds-factories';
import type { UserRow } from '../src/modules/users/users.service';

// Issue 43, on the floor: a requester confirms "I have read the safety data sheet" for each hazardous
// item of a request (sdsAcknowledged on the line); the confirmation is recorded per line.

let t: TestApp;
let requester: UserRow;
let asRequester: supertest.Agent;
let chargeCode: string;

beforeAll(async () => {
  t = await testApp();
  requester = await buildUser(t.db, { role: 'requester' });
  asRequester = await t.loginAs(requester);
  chargeCode = (await buildChargeCode(t.db, { authorisedEmails: [requester.email] })).code;
});
afterAll(() => t.close());

const requestCount = async () => Number((await t.db('stock_requests').count<{ n: string }[]>('* as n'))[0].n);

describe('POST /api/requests: sdsAcknowledged on a hazardous line', () => {
  it('400 naming the SKU of the first hazardous line without it (nothing written); 201 with it, recorded per line', async () => {
    const stamp = Date.now();
    const water = await buildStockedItem(t.db, 10, { sku: `SDS-W-${stamp}` });
    const acid = await buildStockedItem(t.db, 10, { sku: `SDS-ACID-${stamp}` });
    const ether = await buildStockedItem(t.db, 10, { sku: `SDS-ETH-${stamp}` });
    await setItemHazards(t.db, acid.id, { pictograms: ['GHS05'], hStatements: ['H314'], signalWord: 'Danger' });
    // hazardous by an H statement alone
    await setItemHazards(t.db, ether.id, { hStatements: ['H336'] });

    const before = await requestCount();
    const missing = await asRequester
      .post('/api/requests')
      .send({
        chargeCode,
        items: [
          { itemId: water.id, quantity: 1 },
          { itemId: acid.id, quantity: 1 },
          { itemId: ether.id, quantity: 1, sdsAcknowledged: true },
        ],
      })
      .expect(400);
    expect(missing.body).toEqual({
      message: `Confirm you have read the safety data sheet of ${acid.sku} before submitting`,
      errors: [
        {
          field: 'items.1.sdsAcknowledged',
          message: `Confirm you have read the safety data sheet of ${acid.sku} before submitting`,
        },
      ],
    });
    const onlySecond = await asRequester
      .post('/api/requests')
      .send({
        chargeCode,
        items: [
          { itemId: acid.id, quantity: 1, sdsAcknowledged: true },
          { itemId: ether.id, quantity: 1, sdsAcknowledged: false },
        ],
      })
      .expect(400);
    expect(onlySecond.body.message).toBe(
      `Confirm you have read the safety data sheet of ${ether.sku} before submitting`,
    );
    expect(await requestCount()).toBe(before);

    const wrongType = await asRequester
      .post('/api/requests')
      .send({ chargeCode, items: [{ itemId: acid.id, quantity: 1, sdsAcknowledged: 'yes' }] })
      .expect(400);
    expect(wrongType.body.errors).toEqual([{ field: 'items.0.sdsAcknowledged', message: 'must be a boolean' }]);

    const submitted = await asRequester
      .post('/api/requests')
      .send({
        chargeCode,
        items: [
          { itemId: water.id, quantity: 1 },
          { itemId: acid.id, quantity: 2, sdsAcknowledged: true },
          { itemId: ether.id, quantity: 1, sdsAcknowledged: true },
        ],
      })
      .expect(201);
    expect(
      submitted.body.items.map((l: { itemSku: string; sdsAcknowledged: boolean }) => [l.itemSku, l.sdsAcknowledged]),
    ).toEqual([
      [water.sku, false],
      [acid.sku, true],
      [ether.sku, true],
    ]);
    const read = await asRequester.get(`/api/requests/${submitted.body.id}`).expect(200);
    expect(read.body.items.map((l: { sdsAcknowledged: boolean }) => l.sdsAcknowledged)).toEqual([false, true, true]);
  });

  it('after the charge code and the COSHH reference: an unknown code or a missing reference is said first', async () => {
    const acid = await buildStockedItem(t.db, 10, { sku: `SDS-COSHH-${Date.now()}` });
    await setItemHazards(t.db, acid.id, { pictograms: ['GHS06'], signalWord: 'Danger' });
    await t.db('items').where({ id: acid.id }).update({ coshh_required: true });
    const unknownCode = await asRequester
      .post('/api/requests')
      .send({ chargeCode: 'NOPE-SDS-43', items: [{ itemId: acid.id, quantity: 1 }] })
      .expect(400);
    expect(unknownCode.body.message).not.toContain('safety data sheet');
    const noReference = await asRequester
      .post('/api/requests')
      .send({ chargeCode, items: [{ itemId: acid.id, quantity: 1 }] })
      .expect(400);
    expect(noReference.body).toEqual({ message: `A COSHH assessment reference is required for ${acid.sku}` });
    const noTick = await asRequester
      .post('/api/requests')
      .send({ chargeCode, coshhReference: 'RA-7', items: [{ itemId: acid.id, quantity: 1 }] })
      .expect(400);
    expect(noTick.body.message).toBe(`Confirm you have read the safety data sheet of ${acid.sku} before submitting`);
    await asRequester
      .post('/api/requests')
      .send({ chargeCode, coshhReference: 'RA-7', items: [{ itemId: acid.id, quantity: 1, sdsAcknowledged: true }] })
      .expect(201);
  });

  it('a hazardous item given on two lines counts as acknowledged only when both are', async () => {
    const acid = await buildStockedItem(t.db, 10, { sku: `SDS-TWO-${Date.now()}` });
    await setItemHazards(t.db, acid.id, { pictograms: ['GHS05'] });
    await asRequester
      .post('/api/requests')
      .send({
        chargeCode,
        items: [
          { itemId: acid.id, quantity: 1, sdsAcknowledged: true },
          { itemId: acid.id, quantity: 1 },
        ],
      })
      .expect(400);
  });
});
