import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem } from './helpers/factories';
import { agentsByRole, stockOf, type Agents } from './helpers/inventory-factories';
import { buildItemSource, buildOrder, buildSupplier } from './helpers/purchasing-factories';
import {
  ReplenishmentOrdersResult,
  ReplenishmentSuggestions,
} from '../src/modules/replenishment/replenishment.schemas';

let t: TestApp;
let as: Agents;
let categoryId: number;
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
  categoryId = (await buildCategory(t.db)).id;
});
afterAll(() => t.close());

// Every test starts from a store where nothing is short: the items of earlier tests are put out of the way.
beforeEach(async () => {
  await t.db('items').update({ is_active: false });
});

const item = (name: string, currentStock: string, minimumStock: string, reorderQuantity: string | null = null) =>
  buildItem(t.db, {
    name,
    sku: `${name.toUpperCase()}-${Math.random().toString(36).slice(2, 8)}`,
    categoryId,
    currentStock,
    minimumStock,
  }).then(async (row) => {
    if (reorderQuantity !== null)
      await t.db('items').where({ id: row.id }).update({ reorder_quantity: reorderQuantity });
    return row;
  });

const notesOf = (orderPk: number) =>
  t
    .db('notes')
    .where({ reference_type: 'order', reference_id: String(orderPk) })
    .orderBy('id');

describe('GET /api/replenishment', () => {
  it('401 without a session, 403 for a user; managers and admins may read it', async () => {
    await t.request.get('/api/replenishment').expect(401);
    await as.user.get('/api/replenishment').expect(403);
    await as.manager.get('/api/replenishment').expect(200);
    await as.admin.get('/api/replenishment').expect(200);
  });

  it('200 with empty lists when nothing is at or below its minimum', async () => {
    await item('Plenty', '50', '5');
    const res = await as.manager.get('/api/replenishment').expect(200);
    expect(res.body).toEqual({ suppliers: [], withoutSource: [], covered: [] });
  });

  it('200 nets pending and partly received orders, by supplier, with the source price and line totals', async () => {
    const acme = await buildSupplier(t.db, { id: 'acme', name: 'Acme' });
    const beta = await buildSupplier(t.db, { id: 'beta', name: 'Beta' });
    // target = 10 + 20 = 30; short 30 - 4 = 26; a pending order brings 5, a partly received one 8 - 3 = 5 => 16
    const gloves = await item('Gloves', '4', '10', '20');
    // no reorderQuantity: target = 2 x 6 = 12; short 12 - 6 = 6; a received order brings nothing => 6
    const tips = await item('Tips', '6', '6');
    // decimal stock: target 2 x 2.5 = 5, short 5 - 1.25 = 3.75, exact
    const ethanol = await item('Ethanol', '1.25', '2.5');
    await buildItemSource(t.db, acme.id, gloves.id, '2.50');
    await buildItemSource(t.db, acme.id, tips.id, '0.40');
    await buildItemSource(t.db, beta.id, ethanol.id, '12.00');
    await buildOrder(t.db, beta.id, [{ itemId: gloves.id, name: 'Gloves', quantity: '5', unitCost: '2.00' }]);
    await buildOrder(
      t.db,
      beta.id,
      [{ itemId: gloves.id, name: 'Gloves', quantity: '8', unitCost: '2.00', receivedQuantity: '3' }],
      { status: 'partially_received' },
    );
    await buildOrder(
      t.db,
      acme.id,
      [{ itemId: tips.id, name: 'Tips', quantity: '100', unitCost: '0.40', receivedQuantity: '100' }],
      { status: 'received' },
    );

    const res = await as.manager.get('/api/replenishment').expect(200);
    expect(ReplenishmentSuggestions.strict().safeParse(res.body).error).toBeUndefined();
    expect(res.body).toEqual({
      suppliers: [
        {
          supplier: { id: 'acme', name: 'Acme' },
          lines: [
            {
              item: { id: gloves.id, name: 'Gloves', sku: gloves.sku },
              currentStock: 4,
              minimumStock: 10,
              reorderQuantity: 20,
              target: 30,
              onOrder: 10,
              quantity: 16,
              sourceId: expect.any(Number),
              preferred: false,
              unitPrice: '2.50',
              lineTotal: '40.00',
            },
            {
              item: { id: tips.id, name: 'Tips', sku: tips.sku },
              currentStock: 6,
              minimumStock: 6,
              reorderQuantity: null,
              target: 12,
              onOrder: 0,
              quantity: 6,
              sourceId: expect.any(Number),
              preferred: false,
              unitPrice: '0.40',
              lineTotal: '2.40',
            },
          ],
          total: '42.40',
        },
        {
          supplier: { id: 'beta', name: 'Beta' },
          lines: [
            expect.objectContaining({
              item: expect.objectContaining({ id: ethanol.id }),
              target: 5,
              quantity: 3.75,
              unitPrice: '12.00',
              lineTotal: '45.00',
            }),
          ],
          total: '45.00',
        },
      ],
      withoutSource: [],
      covered: [],
    });
  });

  it('200 orders from the preferred source even when dearer, else from the cheapest', async () => {
    const cheap = await buildSupplier(t.db, { name: 'Cheap Ltd' });
    const dear = await buildSupplier(t.db, { name: 'Dear Ltd' });
    const preferredItem = await item('Preferred', '0', '5');
    const cheapestItem = await item('Cheapest', '0', '5');
    await buildItemSource(t.db, cheap.id, preferredItem.id, '1.00');
    const dearSource = await buildItemSource(t.db, dear.id, preferredItem.id, '9.00');
    await t.db('item_sources').where({ id: dearSource.id }).update({ preferred: true });
    await buildItemSource(t.db, dear.id, cheapestItem.id, '3.00');
    const cheapSource = await buildItemSource(t.db, cheap.id, cheapestItem.id, '2.99');

    const res = await as.admin.get('/api/replenishment').expect(200);
    const bySupplier = Object.fromEntries(
      res.body.suppliers.map((s: { supplier: { name: string }; lines: unknown[] }) => [s.supplier.name, s.lines]),
    );
    expect(bySupplier['Dear Ltd']).toEqual([
      expect.objectContaining({
        item: expect.objectContaining({ id: preferredItem.id }),
        sourceId: dearSource.id,
        preferred: true,
        unitPrice: '9.00',
        quantity: 10,
        lineTotal: '90.00',
      }),
    ]);
    expect(bySupplier['Cheap Ltd']).toEqual([
      expect.objectContaining({
        item: expect.objectContaining({ id: cheapestItem.id }),
        sourceId: cheapSource.id,
        preferred: false,
        unitPrice: '2.99',
        lineTotal: '29.90',
      }),
    ]);
  });

  it('200 lists short items without a source apart, and items whose shortfall is on order as covered', async () => {
    const supplier = await buildSupplier(t.db);
    const orphan = await item('Orphan', '1', '3');
    const onOrder = await item('OnOrder', '2', '4');
    await buildItemSource(t.db, supplier.id, onOrder.id, '1.00');
    await buildOrder(t.db, supplier.id, [{ itemId: onOrder.id, name: 'OnOrder', quantity: '6', unitCost: '1.00' }]);
    // zero minimum: out of stock but no reorderQuantity => target 0, never short; with one it is
    await item('ZeroMin', '0', '0');
    const zeroWithReorder = await item('ZeroMinReorder', '0', '0', '12');
    await buildItemSource(t.db, supplier.id, zeroWithReorder.id, '1.00');
    // inactive items are never suggested
    await buildItem(t.db, { name: 'Inactive', categoryId, currentStock: 0, minimumStock: 5, isActive: false });

    const res = await as.manager.get('/api/replenishment').expect(200);
    expect(res.body.withoutSource).toEqual([
      {
        item: { id: orphan.id, name: 'Orphan', sku: orphan.sku },
        currentStock: 1,
        minimumStock: 3,
        reorderQuantity: null,
        target: 6,
        onOrder: 0,
        quantity: 5,
      },
    ]);
    // ZeroMin is at its minimum but not short of its target (0): listed nowhere
    expect(
      res.body.covered.map((c: { item: { name: string }; onOrder: number; quantity: number }) => [
        c.item.name,
        c.onOrder,
        c.quantity,
      ]),
    ).toEqual([['OnOrder', 6, 0]]);
    expect(res.body.suppliers).toEqual([
      expect.objectContaining({
        lines: [
          expect.objectContaining({
            item: expect.objectContaining({ name: 'ZeroMinReorder' }),
            target: 12,
            quantity: 12,
          }),
        ],
      }),
    ]);
  });
});

describe('POST /api/replenishment/orders', () => {
  it('401 without a session, 403 for a user, 400 for bad or unknown itemIds; nothing is created', async () => {
    const supplier = await buildSupplier(t.db);
    const short = await item('Refused', '0', '2');
    await buildItemSource(t.db, supplier.id, short.id, '1.00');
    await t.request.post('/api/replenishment/orders').send({}).expect(401);
    await as.user.post('/api/replenishment/orders').send({}).expect(403);
    const invalid = await as.manager.post('/api/replenishment/orders').send({ itemIds: [] }).expect(400);
    expect(invalid.body.errors).toContainEqual(expect.objectContaining({ field: 'itemIds' }));
    await as.manager
      .post('/api/replenishment/orders')
      .send({ itemIds: ['x'] })
      .expect(400);
    const unknown = await as.manager
      .post('/api/replenishment/orders')
      .send({ itemIds: [short.id, 99999999] })
      .expect(400);
    expect(unknown.body.message).toBe('Item(s) not found: 99999999');
    expect(await t.db('orders').where({ supplier_id: supplier.id })).toEqual([]);
  });

  it('201 one pending order per supplier at the source prices, with a replenishment note; a repeat creates nothing', async () => {
    const acme = await buildSupplier(t.db, { name: 'Acme Repeat' });
    const beta = await buildSupplier(t.db, { name: 'Beta Repeat' });
    const gloves = await item('RGloves', '2', '10', '8'); // 18 - 2 = 16, 4 already pending => 12
    const tips = await item('RTips', '1', '3'); // 6 - 1 = 5
    const coats = await item('RCoats', '0', '1'); // 2
    const orphan = await item('ROrphan', '0', '1'); // no source
    await buildItemSource(t.db, acme.id, gloves.id, '2.50');
    await buildItemSource(t.db, acme.id, tips.id, '0.40');
    await buildItemSource(t.db, beta.id, coats.id, '30.00');
    const pending = await buildOrder(t.db, beta.id, [
      { itemId: gloves.id, name: 'RGloves', quantity: '4', unitCost: '2.00' },
    ]);

    const res = await as.manager.post('/api/replenishment/orders').send({}).expect(201);
    expect(ReplenishmentOrdersResult.strict().safeParse(res.body).error).toBeUndefined();
    expect(res.body.orders).toHaveLength(2);
    const [acmeOrder, betaOrder] = res.body.orders;
    expect(acmeOrder).toMatchObject({
      orderId: expect.stringMatching(/^O\d+$/),
      supplierId: acme.id,
      supplier: { id: acme.id, name: 'Acme Repeat' },
      status: 'pending',
      totalAmount: '32.00',
      createdBy: as.ids.manager,
      items: [
        expect.objectContaining({
          itemId: gloves.id,
          name: 'RGloves',
          sku: gloves.sku,
          quantity: 12,
          receivedQuantity: 0,
          unitCost: '2.50',
          lineTotal: '30.00',
        }),
        expect.objectContaining({ itemId: tips.id, name: 'RTips', quantity: 5, unitCost: '0.40', lineTotal: '2.00' }),
      ],
    });
    expect(betaOrder).toMatchObject({
      supplierId: beta.id,
      totalAmount: '60.00',
      items: [expect.objectContaining({ itemId: coats.id, quantity: 2, unitCost: '30.00' })],
    });
    expect(res.body.withoutSource).toEqual([
      expect.objectContaining({ item: expect.objectContaining({ id: orphan.id }), quantity: 2 }),
    ]);
    expect(res.body.message).toBe(
      `Created 2 order(s) from replenishment: ${acmeOrder.orderId}, ${betaOrder.orderId}; 1 short item(s) have no source`,
    );

    // the state: the orders and their lines as answered, a note on each, an audit row on each
    const orders = await t
      .db('orders')
      .whereIn('supplier_id', [acme.id, beta.id])
      .whereNot({ id: pending.order.id })
      .orderBy('id');
    expect(orders.map((o) => [o.order_id, o.status, o.total_amount, o.created_by])).toEqual([
      [acmeOrder.orderId, 'pending', '32.00', as.ids.manager],
      [betaOrder.orderId, 'pending', '60.00', as.ids.manager],
    ]);
    const lines = await t
      .db('order_items')
      .whereIn(
        'order_id',
        orders.map((o) => o.id),
      )
      .orderBy('id');
    expect(lines.map((l) => [l.item_id, l.quantity, l.unit_cost, l.received_quantity])).toEqual([
      [gloves.id, '12.00', '2.50', '0.00'],
      [tips.id, '5.00', '0.40', '0.00'],
      [coats.id, '2.00', '30.00', '0.00'],
    ]);
    for (const order of orders) {
      const notes = await notesOf(order.id);
      expect(notes).toHaveLength(1);
      expect(notes[0]).toMatchObject({ kind: 'note', created_by: as.ids.manager });
      expect(notes[0].text).toMatch(/^Created from replenishment/);
    }
    const audit = await t
      .db('audit_log')
      .where({ entity_type: 'order', action: 'create' })
      .whereIn('entity_id', [acmeOrder.orderId, betaOrder.orderId]);
    expect(audit).toHaveLength(2);
    expect(audit.every((a) => a.after.origin === 'replenishment' && a.actor_user_id === as.ids.manager)).toBe(true);

    // the suggestions now count those orders, so nothing is short any more except the item with no source
    const after = await as.manager.get('/api/replenishment').expect(200);
    expect(after.body.suppliers).toEqual([]);
    expect(after.body.covered.map((c: { item: { id: number } }) => c.item.id).sort()).toEqual(
      [gloves.id, tips.id, coats.id].sort(),
    );

    // a repeat while those orders are pending creates nothing
    const again = await as.admin.post('/api/replenishment/orders').send({}).expect(200);
    expect(again.body).toMatchObject({
      orders: [],
      withoutSource: [expect.objectContaining({ item: expect.objectContaining({ id: orphan.id }) })],
    });
    expect(again.body.message).toBe(
      'Nothing to order: no item is short of its target beyond what pending orders bring; 1 short item(s) have no source',
    );
    expect(await t.db('orders').whereIn('supplier_id', [acme.id, beta.id])).toHaveLength(3);

    // stock sold further below: only the new shortfall is ordered
    await t.db('items').where({ id: tips.id }).update({ current_stock: '0' });
    const more = await as.manager.post('/api/replenishment/orders').send({}).expect(201);
    expect(more.body.orders).toEqual([
      expect.objectContaining({
        supplierId: acme.id,
        items: [expect.objectContaining({ itemId: tips.id, quantity: 1 })],
      }),
    ]);
  });

  it('201 itemIds limits the run to those items', async () => {
    const supplier = await buildSupplier(t.db);
    const wanted = await item('Wanted', '0', '2');
    const other = await item('Other', '0', '2');
    await buildItemSource(t.db, supplier.id, wanted.id, '1.00');
    await buildItemSource(t.db, supplier.id, other.id, '1.00');
    const res = await as.manager
      .post('/api/replenishment/orders')
      .send({ itemIds: [wanted.id] })
      .expect(201);
    expect(res.body.orders).toEqual([
      expect.objectContaining({ items: [expect.objectContaining({ itemId: wanted.id, quantity: 4 })] }),
    ]);
    const suggestions = await as.manager.get('/api/replenishment').expect(200);
    expect(suggestions.body.suppliers).toEqual([
      expect.objectContaining({
        lines: [expect.objectContaining({ item: expect.objectContaining({ id: other.id }) })],
      }),
    ]);
  });

  it('201 quantities orders the chosen quantity in place of the suggested one; a repeat creates nothing; 400 for a bad quantity', async () => {
    const supplier = await buildSupplier(t.db);
    const chosen = await item('Chosen', '0', '2');
    const suggested = await item('Suggested', '0', '2');
    await buildItemSource(t.db, supplier.id, chosen.id, '1.50');
    await buildItemSource(t.db, supplier.id, suggested.id, '1.00');
    const bad = await as.manager
      .post('/api/replenishment/orders')
      .send({ quantities: [{ itemId: chosen.id, quantity: '0' }] })
      .expect(400);
    expect(bad.body.errors).toContainEqual({ field: 'quantities.0.quantity', message: 'must be at least 0.01' });
    await as.manager
      .post('/api/replenishment/orders')
      .send({ quantities: [{ itemId: 99999999, quantity: '1' }] })
      .expect(400);

    const res = await as.manager
      .post('/api/replenishment/orders')
      .send({ quantities: [{ itemId: chosen.id, quantity: '10.5' }] })
      .expect(201);
    expect(res.body.orders).toEqual([
      expect.objectContaining({
        totalAmount: '19.75',
        items: [
          expect.objectContaining({ itemId: chosen.id, quantity: 10.5 }),
          expect.objectContaining({ itemId: suggested.id, quantity: 4 }),
        ],
      }),
    ]);
    // both are covered by the pending order now: a chosen quantity does not order them again
    const again = await as.manager
      .post('/api/replenishment/orders')
      .send({ quantities: [{ itemId: chosen.id, quantity: '3' }] })
      .expect(200);
    expect(again.body.orders).toEqual([]);
  });

  it('200 with no orders when nothing is short (with or without a body)', async () => {
    await item('Fine', '10', '2');
    await item('AtMinimumNoReorder', '2', '2', '0'); // target 2 + 0 = its stock: not short
    const ordersBefore = await t.db('orders').count<{ n: string }[]>('* as n');
    const res = await as.manager.post('/api/replenishment/orders').send({}).expect(200);
    expect(res.body).toEqual({
      message: 'Nothing to order: no item is short of its target beyond what pending orders bring',
      orders: [],
      withoutSource: [],
    });
    await as.manager.post('/api/replenishment/orders').expect(200);
    expect(await t.db('orders').count<{ n: string }[]>('* as n')).toEqual(ordersBefore);
  });

  it('400 when a suggested line is larger than an order can hold; nothing is created', async () => {
    const supplier = await buildSupplier(t.db);
    const huge = await item('Huge', '0', '999999999999.99'); // target twice that: beyond numeric(14,2)
    await buildItemSource(t.db, supplier.id, huge.id, '1.00');
    const res = await as.manager.post('/api/replenishment/orders').send({}).expect(400);
    expect(res.body.message).toMatch(/larger than an order can hold/);
    expect(await t.db('orders').where({ supplier_id: supplier.id })).toEqual([]);
  });

  it('two simultaneous runs create the orders once', async () => {
    const supplier = await buildSupplier(t.db);
    const a = await item('ConcA', '0', '3');
    const b = await item('ConcB', '1', '3');
    await buildItemSource(t.db, supplier.id, a.id, '1.00');
    await buildItemSource(t.db, supplier.id, b.id, '1.00');
    const answers = await Promise.all([
      as.manager.post('/api/replenishment/orders').send({}),
      as.admin.post('/api/replenishment/orders').send({}),
      as.manager.post('/api/replenishment/orders').send({ itemIds: [a.id, b.id] }),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 201]);
    const orders = await t.db('orders').where({ supplier_id: supplier.id });
    expect(orders).toHaveLength(1);
    const lines = await t.db('order_items').where({ order_id: orders[0].id }).orderBy('item_id');
    expect(lines.map((l) => [l.item_id, l.quantity])).toEqual([
      [a.id, '6.00'],
      [b.id, '5.00'],
    ]);
  });

  it('receiving the created order brings the stock back above the minimum, and nothing is suggested after', async () => {
    const supplier = await buildSupplier(t.db);
    const flasks = await item('Flasks', '3', '5', '10'); // target 15 => order 12
    await buildItemSource(t.db, supplier.id, flasks.id, '7.25');
    const created = await as.manager
      .post('/api/replenishment/orders')
      .send({ itemIds: [flasks.id] })
      .expect(201);
    const order = created.body.orders[0];
    expect(order.items).toEqual([expect.objectContaining({ itemId: flasks.id, quantity: 12, unitCost: '7.25' })]);

    // part of it first: still pending what is outstanding, so nothing new is suggested
    await as.manager
      .post(`/api/orders/${order.orderId}/receive`)
      .send({ receivedItems: [{ orderItemId: order.items[0].orderItemId, receivedQuantity: 2 }] })
      .expect(200);
    expect(await stockOf(t.db, flasks.id)).toBe('5.00');
    const partly = await as.manager.get('/api/replenishment').expect(200);
    expect(partly.body.covered).toEqual([
      expect.objectContaining({
        item: expect.objectContaining({ id: flasks.id }),
        currentStock: 5,
        onOrder: 10,
        quantity: 0,
      }),
    ]);
    await as.manager.post('/api/replenishment/orders').send({}).expect(200);

    const received = await as.manager
      .post(`/api/orders/${order.orderId}/receive`)
      .send({ receivedItems: [{ orderItemId: order.items[0].orderItemId, receivedQuantity: 10 }] })
      .expect(200);
    expect(received.body.order.status).toBe('received');
    expect(await stockOf(t.db, flasks.id)).toBe('15.00');
    const movements = await t
      .db('stock_movements')
      .where({ item_id: flasks.id, reference_type: 'order', reference_id: order.orderId });
    expect(movements.map((m) => m.quantity).sort()).toEqual(['10.00', '2.00']);
    expect(
      await as.manager
        .get('/api/replenishment')
        .expect(200)
        .then((r) => r.body),
    ).toEqual({ suppliers: [], withoutSource: [], covered: [] });
  });
});
