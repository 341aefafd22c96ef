import type supertest from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem, buildUser } from './helpers/factories';
import { buildItemSource, buildOrder, buildSupplier, invoicePdf } from './helpers/purchasing-factories';
import { buildChargeCode } from './helpers/sales-factories';
import { sell } from './helpers/finance-factories';

/**
 * access.profile: 'spec' (the default, the interface's access: any signed-in user imports items, keeps
 * suppliers and sources, sets any sale's recipient, exports the catalogue, reads cost prices and
 * invoices) or 'strict' (those need a manager; a sale's recipient its processor or a manager).
 */

const REFUSED = 'This action requires the manager role (setting access.profile is strict)';

let t: TestApp;
let admin: supertest.Agent;
let manager: supertest.Agent;
let user: supertest.Agent;
let otherUser: supertest.Agent;
let category: { id: number; name: string };
let chargeCode: string;

beforeAll(async () => {
  t = await testApp();
  [admin, manager, user, otherUser] = await Promise.all(
    (['admin', 'manager', 'user', 'user'] as const).map(async (role) => t.loginAs(await buildUser(t.db, { role }))),
  );
  category = await buildCategory(t.db, { name: 'Solvents' });
  chargeCode = (await buildChargeCode(t.db)).code;
});
afterAll(() => t.close());

const setProfile = (profile: string) => admin.put('/api/settings/access.profile').send({ value: { profile } });

/** Every row of the tables these actions write, to show a refusal changed nothing. */
async function snapshot() {
  const [items, movements, suppliers, sources, sales] = await Promise.all([
    t.db('items').orderBy('id'),
    t.db('stock_movements').orderBy('id'),
    t.db('suppliers').orderBy('id'),
    t.db('item_sources').orderBy('id'),
    t.db('sales').orderBy('id').select('id', 'delivered_to', 'delivered_to_email', 'delivered_at'),
  ]);
  return { items, movements, suppliers, sources, sales };
}

/** A supplier with one source and a received order whose invoice PDF is attached. */
async function purchasing() {
  const item = await buildItem(t.db, { categoryId: category.id, price: '9.99' });
  const supplier = await buildSupplier(t.db);
  const source = await buildItemSource(t.db, supplier.id, item.id, '4.25');
  const { order } = await buildOrder(t.db, supplier.id, [
    { itemId: item.id, name: item.name, quantity: '3', unitCost: '4.25' },
  ]);
  await t.db('orders').where({ id: order.id }).update({ total_amount: '12.75' });
  await manager
    .post(`/api/orders/${order.order_id}/upload-invoice`)
    .attach('invoice', await invoicePdf(), 'invoice.pdf')
    .expect(200);
  return { item, supplier, source, order };
}

const importBody = (sku: string) => ({
  items: [{ name: 'Cheap acetone', sku, categoryName: category.name, price: '0.01', currentStock: 5000 }],
});

describe('PUT /api/settings/access.profile', () => {
  it('400 for a profile other than spec or strict, and nothing stored', async () => {
    const res = await setProfile('open').expect(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: 'value.profile' }));
    expect(await t.db('settings').where({ key: 'access.profile' }).first()).toBeUndefined();
    await admin
      .put('/api/settings/access.profile')
      .send({ value: { profile: 'strict', extra: true } })
      .expect(400);
  });

  it('403 for a manager; 200 for an admin, audited', async () => {
    await manager
      .put('/api/settings/access.profile')
      .send({ value: { profile: 'strict' } })
      .expect(403);
    const res = await setProfile('strict').expect(200);
    expect(res.body).toMatchObject({ key: 'access.profile', value: { profile: 'strict' } });
    expect(
      await t.db('audit_log').where({ entity_type: 'setting', entity_id: 'access.profile' }).first(),
    ).toBeDefined();
    await setProfile('spec').expect(200);
  });
});

describe('access.profile spec (the default): the interface as it is', () => {
  beforeEach(async () => {
    await t.db('settings').where({ key: 'access.profile' }).del();
  });

  it('a user imports items with stock, keeps suppliers and sources, exports, sets another sale’s recipient, reads cost prices and invoices', async () => {
    const { item, supplier, source, order } = await purchasing();
    const imported = await user.post('/api/items/bulk-import').send(importBody('SPEC-IMPORT')).expect(200);
    expect(imported.body).toMatchObject({ successful: 1, failed: 0 });
    expect(await t.db('items').where({ sku: 'SPEC-IMPORT' }).first()).toMatchObject({ current_stock: '5000.00' });

    await user.post('/api/suppliers').send({ id: 'spec-supplier', name: 'Spec Supplier' }).expect(201);
    await user.put(`/api/suppliers/${supplier.id}`).send({ name: 'Renamed by a user' }).expect(200);
    const other = await buildItem(t.db, { categoryId: category.id });
    await user.post(`/api/suppliers/${supplier.id}/items`).send({ itemId: other.id, price: '1.00' }).expect(201);
    await user.put(`/api/sources/${source.id}`).send({ preferred: true }).expect(200);

    const sold = await sell(manager, chargeCode, [
      { itemId: (await buildItem(t.db, { currentStock: 5 })).id, quantity: 1 },
    ]);
    await user.patch(`/api/sales/${sold.id}/recipient`).send({ deliveredTo: 'Dr Spec' }).expect(200);

    const exported = await user
      .post('/api/items/bulk/export')
      .send({ itemIds: [item.id], format: 'csv' })
      .expect(200);
    expect(exported.text).toContain(item.sku);

    const withItems = await user.get(`/api/suppliers/${supplier.id}`).expect(200);
    expect(withItems.body.items).toContainEqual(expect.objectContaining({ id: source.id, price: '4.25' }));
    const detail = await user.get(`/api/orders/${order.order_id}`).expect(200);
    expect(detail.body).toMatchObject({
      totalAmount: '12.75',
      items: [expect.objectContaining({ unitCost: '4.25', lineTotal: '12.75' })],
    });
    const pdf = await user.get(`/api/orders/${order.order_id}/invoice-pdf`).expect(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
  });
});

describe('access.profile strict', () => {
  beforeAll(async () => {
    await setProfile('strict').expect(200);
  });
  afterAll(async () => {
    await setProfile('spec').expect(200);
  });

  it('POST /api/items/bulk-import: 403 for a user and no item or movement made; a manager imports', async () => {
    const before = await snapshot();
    const res = await user.post('/api/items/bulk-import').send(importBody('STRICT-IMPORT')).expect(403);
    expect(res.body.message).toBe(REFUSED);
    expect(await snapshot()).toEqual(before);
    await manager.post('/api/items/bulk-import').send(importBody('STRICT-IMPORT')).expect(200);
    expect(await t.db('items').where({ sku: 'STRICT-IMPORT' }).first()).toMatchObject({ current_stock: '5000.00' });
  });

  it('suppliers and sources: a user may not create, edit, link or mark preferred (403, nothing changed); a manager may', async () => {
    const { supplier, source } = await purchasing();
    const other = await buildItem(t.db, { categoryId: category.id });
    const before = await snapshot();
    const attempts = [
      () => user.post('/api/suppliers').send({ id: 'strict-supplier', name: 'Strict Supplier' }),
      () => user.put(`/api/suppliers/${supplier.id}`).send({ name: 'Renamed by a user' }),
      () => user.post(`/api/suppliers/${supplier.id}/items`).send({ itemId: other.id, price: '1.00' }),
      () => user.put(`/api/sources/${source.id}`).send({ preferred: true }),
      () => user.put(`/api/sources/${source.id}`).send({ price: '0.01' }),
    ];
    for (const attempt of attempts) {
      const res = await attempt().expect(403);
      expect(res.body.message).toBe(REFUSED);
    }
    expect(await snapshot()).toEqual(before);

    await manager.post('/api/suppliers').send({ id: 'strict-supplier', name: 'Strict Supplier' }).expect(201);
    await manager.put(`/api/suppliers/${supplier.id}`).send({ name: 'Renamed by a manager' }).expect(200);
    await manager.post(`/api/suppliers/${supplier.id}/items`).send({ itemId: other.id, price: '1.00' }).expect(201);
    const marked = await manager.put(`/api/sources/${source.id}`).send({ preferred: true }).expect(200);
    expect(marked.body).toMatchObject({ preferred: true, price: '4.25' });
  });

  it("PATCH /api/sales/{id}/recipient: another's sale is refused to a user (recipient unchanged); the processor and a manager may", async () => {
    const item = await buildItem(t.db, { currentStock: 10 });
    const ownSale = await sell(user, chargeCode, [{ itemId: item.id, quantity: 1 }]);
    const othersSale = await sell(otherUser, chargeCode, [{ itemId: item.id, quantity: 1 }]);
    const before = await snapshot();
    const res = await user.patch(`/api/sales/${othersSale.id}/recipient`).send({ deliveredTo: 'Mallory' }).expect(403);
    expect(res.body.message).toBe(
      "Only the sale's processor or a manager may set its recipient (setting access.profile is strict)",
    );
    expect(await snapshot()).toEqual(before);

    await user.patch(`/api/sales/${ownSale.id}/recipient`).send({ deliveredTo: 'Dr Own' }).expect(200);
    await manager.patch(`/api/sales/${othersSale.id}/recipient`).send({ deliveredTo: 'Dr Other' }).expect(200);
    expect(await t.db('sales').where({ id: othersSale.id }).first()).toMatchObject({ delivered_to: 'Dr Other' });
    // an unknown sale is still a 404, not a refusal that would tell it exists
    await user.patch('/api/sales/999999/recipient').send({ deliveredTo: 'x' }).expect(404);
  });

  it('POST /api/items/bulk/export: 403 for a user; a manager exports', async () => {
    const item = await buildItem(t.db, { categoryId: category.id });
    const res = await user
      .post('/api/items/bulk/export')
      .send({ itemIds: [item.id], format: 'csv' })
      .expect(403);
    expect(res.body.message).toBe(REFUSED);
    const exported = await manager
      .post('/api/items/bulk/export')
      .send({ itemIds: [item.id], format: 'csv' })
      .expect(200);
    expect(exported.text).toContain(item.sku);
  });

  it('invoice PDFs: 403 for a user; a manager downloads', async () => {
    const { order } = await purchasing();
    const res = await user.get(`/api/orders/${order.order_id}/invoice-pdf`).expect(403);
    expect(res.body.message).toBe(REFUSED);
    const pdf = await manager.get(`/api/orders/${order.order_id}/invoice-pdf`).expect(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
  });

  it('cost prices are null for a user (sources, orders, order lines, item order history); a manager reads them', async () => {
    const { item, supplier, source, order } = await purchasing();
    const asUser = await user.get(`/api/suppliers/${supplier.id}`).expect(200);
    expect(asUser.body.items).toEqual([
      expect.objectContaining({ id: source.id, price: null, item: expect.objectContaining({ id: item.id }) }),
    ]);
    const detail = await user.get(`/api/orders/${order.order_id}`).expect(200);
    expect(detail.body).toMatchObject({
      totalAmount: null,
      items: [expect.objectContaining({ quantity: 3, unitCost: null, lineTotal: null })],
    });
    const list = await user.get('/api/orders').query({ supplierId: supplier.id }).expect(200);
    expect(list.body).toEqual([expect.objectContaining({ orderId: order.order_id, totalAmount: null })]);
    const history = await user.get(`/api/items/${item.id}/order-history`).expect(200);
    expect(history.body.orders).toEqual([expect.objectContaining({ orderId: order.order_id, unitCost: null })]);

    expect((await manager.get(`/api/suppliers/${supplier.id}`).expect(200)).body.items).toEqual([
      expect.objectContaining({ price: '4.25' }),
    ]);
    expect((await manager.get(`/api/orders/${order.order_id}`).expect(200)).body).toMatchObject({
      totalAmount: '12.75',
      items: [expect.objectContaining({ unitCost: '4.25' })],
    });
    expect((await manager.get(`/api/items/${item.id}/order-history`).expect(200)).body.orders).toEqual([
      expect.objectContaining({ unitCost: 4.25 }),
    ]);
  });
});
