import { PDFParse } from 'pdf-parse';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem, buildUser } from './helpers/factories';
import { buildItemSource, buildOrder, buildSupplier, invoicePdf } from './helpers/purchasing-factories';
import { stockOf } from './helpers/inventory-factories';
import { binaryBody } from './helpers/binary-body';

let t: TestApp;
let user: supertest.Agent;
let manager: supertest.Agent;
let managerId: string;
beforeAll(async () => {
  t = await testApp();
  user = await t.loginAs(await buildUser(t.db, { role: 'user' }));
  const m = await buildUser(t.db, { role: 'manager' });
  managerId = m.id;
  manager = await t.loginAs(m);
});
afterAll(() => t.close());

const movementsFor = (orderId: string) =>
  t.db('stock_movements').where({ reference_type: 'order', reference_id: orderId }).orderBy('id');

describe('POST /api/orders', () => {
  it('201 creates a pending order with O<digits> id, lines and a decimal total', async () => {
    const supplier = await buildSupplier(t.db);
    const item = await buildItem(t.db, { name: 'Gloves', sku: 'GLV-1' });
    const res = await manager
      .post('/api/orders')
      .send({
        supplierId: supplier.id,
        notes: 'urgent',
        items: [
          { itemId: item.id, quantity: 3, unitCost: '0.10' },
          { name: 'Free text widget', quantity: '0.5', unitCost: 0.2 },
          { name: 'Costly', quantity: '1.5', unitCost: '1234.57' },
        ],
      })
      .expect(201);
    expect(res.body).toMatchObject({
      orderId: expect.stringMatching(/^O\d+$/),
      supplierId: supplier.id,
      supplier: { id: supplier.id, name: supplier.name },
      status: 'pending',
      // 0.30 + 0.10 + 1851.855 -> 1852.26 (no float drift)
      totalAmount: '1852.26',
      notes: 'urgent',
      createdBy: managerId,
      hasInvoice: false,
      itemCount: 3,
    });
    expect(res.body.items).toEqual([
      {
        orderItemId: expect.any(Number),
        itemId: item.id,
        name: 'Gloves',
        sku: 'GLV-1',
        quantity: 3,
        receivedQuantity: 0,
        outstandingQuantity: 3,
        unitCost: '0.10',
        lineTotal: '0.30',
      },
      {
        orderItemId: expect.any(Number),
        itemId: null,
        name: 'Free text widget',
        sku: null,
        quantity: 0.5,
        receivedQuantity: 0,
        outstandingQuantity: 0.5,
        unitCost: '0.20',
        lineTotal: '0.10',
      },
      {
        orderItemId: expect.any(Number),
        itemId: null,
        name: 'Costly',
        sku: null,
        quantity: 1.5,
        receivedQuantity: 0,
        outstandingQuantity: 1.5,
        unitCost: '1234.57',
        lineTotal: '1851.86',
      },
    ]);
    const row = await t.db('orders').where({ order_id: res.body.orderId }).first();
    expect(row.total_amount).toBe('1852.26');
  });

  it('takes order numbers from a sequence: each new order gets a larger one', async () => {
    const supplier = await buildSupplier(t.db);
    const body = { supplierId: supplier.id, items: [{ name: 'A', quantity: 1, unitCost: 1 }] };
    const [a, b] = await Promise.all([
      manager.post('/api/orders').send(body).expect(201),
      manager.post('/api/orders').send(body).expect(201),
    ]);
    expect(a.body.orderId).not.toBe(b.body.orderId);
  });

  it('400 for validation, unknown supplier, unknown item; 403 for a user; 401 without a session', async () => {
    const supplier = await buildSupplier(t.db);
    await t.request.post('/api/orders').send({}).expect(401);
    await user
      .post('/api/orders')
      .send({ supplierId: supplier.id, items: [{ name: 'A', quantity: 1, unitCost: 1 }] })
      .expect(403);
    const empty = await manager.post('/api/orders').send({ supplierId: supplier.id, items: [] }).expect(400);
    expect(empty.body.errors).toContainEqual(expect.objectContaining({ field: 'items' }));
    const bad = await manager
      .post('/api/orders')
      .send({ supplierId: supplier.id, items: [{ quantity: 0, unitCost: '1.234' }] })
      .expect(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'items.0.quantity',
      'items.0.unitCost',
    ]);
    const noName = await manager
      .post('/api/orders')
      .send({ supplierId: supplier.id, items: [{ quantity: 1, unitCost: 1 }] })
      .expect(400);
    expect(noName.body.errors).toEqual([
      { field: 'items.0.name', message: 'name is required for a line without itemId' },
    ]);
    const noSupplier = await manager
      .post('/api/orders')
      .send({ supplierId: 'ghost', items: [{ name: 'A', quantity: 1, unitCost: 1 }] })
      .expect(400);
    expect(noSupplier.body.message).toBe("Supplier 'ghost' does not exist");
    const noItem = await manager
      .post('/api/orders')
      .send({ supplierId: supplier.id, items: [{ itemId: 999999, quantity: 1, unitCost: 1 }] })
      .expect(400);
    expect(noItem.body.message).toBe('Item(s) not found: 999999');
    expect(await t.db('orders').where({ supplier_id: supplier.id })).toHaveLength(0);
  });
});

describe('GET /api/orders and GET /api/orders/:id', () => {
  it('200 lists orders newest first with filters; one order by id or orderId', async () => {
    const supplier = await buildSupplier(t.db);
    const older = await buildOrder(t.db, supplier.id, [{ name: 'Old', quantity: '1', unitCost: '1' }], {
      createdAt: new Date('2026-01-01'),
    });
    const newer = await buildOrder(t.db, supplier.id, [{ name: 'New', quantity: '1', unitCost: '1' }], {
      status: 'received',
    });
    const all = await user.get(`/api/orders?supplierId=${supplier.id}`).expect(200);
    expect(all.body.map((o: { orderId: string }) => o.orderId)).toEqual([newer.order.order_id, older.order.order_id]);
    expect(all.body[0]).not.toHaveProperty('items');
    const received = await user.get(`/api/orders?supplierId=${supplier.id}&status=received`).expect(200);
    expect(received.body.map((o: { orderId: string }) => o.orderId)).toEqual([newer.order.order_id]);
    await user.get('/api/orders?status=lost').expect(400);

    const byId = await user.get(`/api/orders/${older.order.id}`).expect(200);
    const byOrderId = await user.get(`/api/orders/${older.order.order_id}`).expect(200);
    expect(byOrderId.body).toEqual(byId.body);
    expect(byId.body.items).toEqual([
      expect.objectContaining({ orderItemId: older.lines[0].id, name: 'Old', quantity: 1, receivedQuantity: 0 }),
    ]);
  });

  it('404 for an unknown order, 400 for a malformed id, 401 without a session', async () => {
    expect((await user.get('/api/orders/999999').expect(404)).body.message).toBe('Order not found');
    await user.get('/api/orders/O999999').expect(404);
    await user.get('/api/orders/abc').expect(400);
    await t.request.get('/api/orders').expect(401);
  });
});

describe('POST /api/orders/:id/receive', () => {
  async function orderWithTwoItems() {
    const supplier = await buildSupplier(t.db);
    const a = await buildItem(t.db, { name: 'Tips', currentStock: 5 });
    const b = await buildItem(t.db, { name: 'Tubes', currentStock: 0 });
    const built = await buildOrder(t.db, supplier.id, [
      { itemId: a.id, name: 'Tips', quantity: '10', unitCost: '1.00' },
      { itemId: b.id, name: 'Tubes', quantity: '4', unitCost: '2.00' },
      { name: 'Unknown thing', quantity: '2', unitCost: '3.00' },
    ]);
    return { ...built, a, b };
  }

  it('receives partly then fully: stock in through the ledger, statuses partially_received then received', async () => {
    const { order, lines, a, b } = await orderWithTwoItems();
    const first = await manager
      .post(`/api/orders/${order.order_id}/receive`)
      .send({
        receivedItems: [
          { orderItemId: lines[0].id, receivedQuantity: 4, addToInventory: true },
          { orderItemId: lines[1].id, receivedQuantity: '1.5', addToInventory: false },
        ],
      })
      .expect(200);
    expect(first.body.message).toBe(`Order ${order.order_id} partially received`);
    expect(first.body.order.status).toBe('partially_received');
    expect(first.body.order.items.map((l: { receivedQuantity: number }) => l.receivedQuantity)).toEqual([4, 1.5, 0]);
    expect(first.body.stockMovements).toEqual([{ itemId: a.id, quantity: 4, previousStock: 5, newStock: 9 }]);
    expect(await stockOf(t.db, a.id)).toBe('9.00');
    expect(await stockOf(t.db, b.id)).toBe('0.00');

    const second = await manager
      .post(`/api/orders/${order.id}/receive`)
      .send({
        receivedItems: [
          { orderItemId: lines[0].id, receivedQuantity: 6 },
          { orderItemId: lines[1].id, receivedQuantity: '2.5', addToInventory: true },
          { orderItemId: lines[2].id, receivedQuantity: 2, addToInventory: true },
        ],
      })
      .expect(200);
    expect(second.body.order.status).toBe('received');
    expect(second.body.order.receivedAt).toEqual(expect.any(String));
    expect(await stockOf(t.db, a.id)).toBe('15.00');
    expect(await stockOf(t.db, b.id)).toBe('2.50');

    const movements = await movementsFor(order.order_id);
    expect(movements.map((m) => [m.item_id, m.type, m.quantity, m.reason, m.performed_by])).toEqual([
      [a.id, 'in', '4.00', `Received on order ${order.order_id}`, managerId],
      [a.id, 'in', '6.00', `Received on order ${order.order_id}`, managerId],
      [b.id, 'in', '2.50', `Received on order ${order.order_id}`, managerId],
    ]);

    const again = await manager
      .post(`/api/orders/${order.id}/receive`)
      .send({ receivedItems: [{ orderItemId: lines[0].id, receivedQuantity: 1 }] })
      .expect(400);
    expect(again.body.message).toBe(`Order ${order.order_id} has already been received`);
  });

  it('400 for more than outstanding, a foreign line, a repeated line or a zero quantity; nothing changes', async () => {
    const { order, lines, a } = await orderWithTwoItems();
    const other = await buildOrder(t.db, (await buildSupplier(t.db)).id, [{ name: 'X', quantity: '1', unitCost: '1' }]);
    const post = (receivedItems: unknown[]) => manager.post(`/api/orders/${order.id}/receive`).send({ receivedItems });

    const over = await post([
      { orderItemId: lines[0].id, receivedQuantity: 2 },
      { orderItemId: lines[1].id, receivedQuantity: 5 },
    ]).expect(400);
    expect(over.body.message).toBe(`Cannot receive 5 of 'Tubes' (line ${lines[1].id}): only 4 outstanding`);
    const foreign = await post([{ orderItemId: other.lines[0].id, receivedQuantity: 1 }]).expect(400);
    expect(foreign.body.message).toBe(`Order line ${other.lines[0].id} does not belong to order ${order.order_id}`);
    await post([
      { orderItemId: lines[0].id, receivedQuantity: 1 },
      { orderItemId: lines[0].id, receivedQuantity: 1 },
    ]).expect(400);
    const zero = await post([{ orderItemId: lines[0].id, receivedQuantity: 0 }]).expect(400);
    expect(zero.body.errors).toContainEqual(expect.objectContaining({ field: 'receivedItems.0.receivedQuantity' }));
    await post([]).expect(400);

    expect(await stockOf(t.db, a.id)).toBe('5.00');
    expect(await movementsFor(order.order_id)).toHaveLength(0);
    const row = await t.db('orders').where({ id: order.id }).first();
    expect(row.status).toBe('pending');
    expect((await t.db('order_items').where({ id: lines[0].id }).first()).received_quantity).toBe('0.00');
  });

  it('two parallel receipts of the whole order: exactly one succeeds, stock goes up once', async () => {
    const { order, lines, a, b } = await orderWithTwoItems();
    const all = { receivedItems: lines.map((l, i) => ({ orderItemId: l.id, receivedQuantity: [10, 4, 2][i] })) };
    const results = await Promise.all([0, 1].map(() => manager.post(`/api/orders/${order.id}/receive`).send(all)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(await stockOf(t.db, a.id)).toBe('15.00');
    expect(await stockOf(t.db, b.id)).toBe('4.00');
    expect(await movementsFor(order.order_id)).toHaveLength(2);
  });

  it('404 for an unknown order, 403 for a user', async () => {
    await manager
      .post('/api/orders/999999/receive')
      .send({ receivedItems: [{ orderItemId: 1, receivedQuantity: 1 }] })
      .expect(404);
    await user
      .post('/api/orders/1/receive')
      .send({ receivedItems: [{ orderItemId: 1, receivedQuantity: 1 }] })
      .expect(403);
  });
});

describe('POST /api/orders/:id/receive: a free-text line received as a new item (issue 28)', () => {
  const setMarkup = (percent: number) =>
    t
      .db('settings')
      .insert({ key: 'purchasing.defaultMarkup', value: JSON.stringify({ percent }) })
      .onConflict('key')
      .merge();

  it('creates the item with the SKU and sale price given, its stock the received quantity, linked to the line and the supplier', async () => {
    const supplier = await buildSupplier(t.db);
    const category = await buildCategory(t.db);
    const { order, lines } = await buildOrder(t.db, supplier.id, [
      { name: 'Cryo boxes', quantity: '8', unitCost: '2.10' },
    ]);
    const res = await manager
      .post(`/api/orders/${order.order_id}/receive`)
      .send({
        receivedItems: [
          {
            orderItemId: lines[0].id,
            receivedQuantity: 2,
            addToInventory: true,
            sku: 'CRYO-BOX-8',
            price: '3.50',
            categoryId: category.id,
          },
        ],
      })
      .expect(200);
    const item = await t.db('items').where({ sku: 'CRYO-BOX-8' }).first();
    expect(item).toMatchObject({
      name: 'Cryo boxes',
      price: '3.50',
      category_id: category.id,
      current_stock: '2.00',
      created_by: managerId,
      is_active: true,
    });
    expect(res.body.order.items[0]).toMatchObject({ itemId: item.id, sku: 'CRYO-BOX-8', receivedQuantity: 2 });
    expect(res.body.stockMovements).toEqual([{ itemId: item.id, quantity: 2, previousStock: 0, newStock: 2 }]);
    const movements = await movementsFor(order.order_id);
    expect(movements.map((m) => [m.item_id, m.type, m.quantity, m.reason])).toEqual([
      [item.id, 'in', '2.00', `Received on order ${order.order_id}`],
    ]);
    expect(await t.db('item_sources').where({ supplier_id: supplier.id, item_id: item.id }).first()).toMatchObject({
      price: '2.10',
    });
    // the rest of the line now arrives into the new item
    await manager
      .post(`/api/orders/${order.id}/receive`)
      .send({ receivedItems: [{ orderItemId: lines[0].id, receivedQuantity: 6 }] })
      .expect(200);
    expect(await stockOf(t.db, item.id)).toBe('8.00');
  });

  it('a line partly received before without an item: its new item holds all that has arrived', async () => {
    const supplier = await buildSupplier(t.db);
    const category = await buildCategory(t.db);
    const { order, lines } = await buildOrder(t.db, supplier.id, [
      { name: 'Arrived in two parts', quantity: '8', unitCost: '1.00', receivedQuantity: '2' },
    ]);
    await manager
      .post(`/api/orders/${order.id}/receive`)
      .send({
        receivedItems: [
          { orderItemId: lines[0].id, receivedQuantity: 3, sku: 'TWO-PARTS', price: '1.50', categoryId: category.id },
        ],
      })
      .expect(200);
    const item = await t.db('items').where({ sku: 'TWO-PARTS' }).first();
    expect(item.current_stock).toBe('5.00');
    expect((await t.db('order_items').where({ id: lines[0].id }).first()).received_quantity).toBe('5.00');
  });

  it('without a price the default markup proposes it (cost x (1 + markup), to the penny); without a category the setting gives it', async () => {
    const supplier = await buildSupplier(t.db);
    const category = await buildCategory(t.db);
    await setMarkup(25);
    await t
      .db('settings')
      .insert({ key: 'orders.defaultCategoryId', value: JSON.stringify({ categoryId: category.id }) })
      .onConflict('key')
      .merge();
    onTestFinished(() =>
      t.db('settings').whereIn('key', ['purchasing.defaultMarkup', 'orders.defaultCategoryId']).delete(),
    );
    const { order, lines } = await buildOrder(t.db, supplier.id, [
      { name: 'Marked up', quantity: '1', unitCost: '2.10' },
    ]);
    await manager
      .post(`/api/orders/${order.id}/receive`)
      .send({ receivedItems: [{ orderItemId: lines[0].id, receivedQuantity: 1, sku: 'MARKED-UP-1' }] })
      .expect(200);
    // 2.10 x 1.25 = 2.625 -> 2.63
    expect(await t.db('items').where({ sku: 'MARKED-UP-1' }).first()).toMatchObject({
      price: '2.63',
      category_id: category.id,
    });
  });

  it('409 with a field error when the SKU is taken (by an item or twice in the receipt); 400 for a SKU on a line that has an item; nothing changes', async () => {
    const supplier = await buildSupplier(t.db);
    const category = await buildCategory(t.db);
    await buildItem(t.db, { sku: 'ALREADY-THERE' });
    const known = await buildItem(t.db, { currentStock: 0 });
    const { order, lines } = await buildOrder(t.db, supplier.id, [
      { name: 'New one', quantity: '2', unitCost: '1.00' },
      { name: 'New two', quantity: '2', unitCost: '1.00' },
      { itemId: known.id, name: 'Known', quantity: '2', unitCost: '1.00' },
    ]);
    const post = (receivedItems: unknown[]) => manager.post(`/api/orders/${order.id}/receive`).send({ receivedItems });
    const taken = await post([
      { orderItemId: lines[0].id, receivedQuantity: 1, sku: 'ALREADY-THERE', price: '2.00', categoryId: category.id },
    ]).expect(409);
    expect(taken.body.message).toBe("An item with SKU 'ALREADY-THERE' already exists");
    expect(taken.body.errors).toEqual([
      { field: 'receivedItems.0.sku', message: "An item with SKU 'ALREADY-THERE' already exists" },
    ]);
    const twice = await post([
      { orderItemId: lines[0].id, receivedQuantity: 1, sku: 'SAME-NEW', price: '2.00', categoryId: category.id },
      { orderItemId: lines[1].id, receivedQuantity: 1, sku: 'SAME-NEW', price: '2.00', categoryId: category.id },
    ]).expect(409);
    expect(twice.body.errors).toEqual([
      { field: 'receivedItems.1.sku', message: "An item with SKU 'SAME-NEW' already exists" },
    ]);
    const onItem = await post([{ orderItemId: lines[2].id, receivedQuantity: 1, sku: 'NOT-FOR-ITEMS' }]).expect(400);
    expect(onItem.body.errors).toEqual([
      {
        field: 'receivedItems.0.sku',
        message: 'only a line without an item, received into inventory, becomes a new item',
      },
    ]);
    const empty = await post([{ orderItemId: lines[0].id, receivedQuantity: 1, sku: ' ', price: '2.00' }]).expect(400);
    expect(empty.body.errors).toContainEqual({ field: 'receivedItems.0.sku', message: 'is required' });

    expect(await t.db('items').whereIn('sku', ['SAME-NEW', 'NOT-FOR-ITEMS'])).toHaveLength(0);
    expect(
      (await t.db('order_items').where({ order_id: order.id }).orderBy('id')).map((l) => [
        l.item_id,
        l.received_quantity,
      ]),
    ).toEqual([
      [null, '0.00'],
      [null, '0.00'],
      [known.id, '0.00'],
    ]);
    expect(await movementsFor(order.order_id)).toHaveLength(0);
  });
});

describe('POST /api/orders/:id/cancel (issue 28)', () => {
  it('200 cancels an order while nothing is received: status cancelled, an audit row, and replenishment no longer counts it', async () => {
    const supplier = await buildSupplier(t.db);
    const swabs = await buildItem(t.db, { name: 'Cancel swabs', currentStock: '0', minimumStock: '5' });
    await buildItemSource(t.db, supplier.id, swabs.id, '1.00');
    const created = await manager
      .post('/api/orders')
      .send({ supplierId: supplier.id, items: [{ itemId: swabs.id, quantity: 10, unitCost: '1.00' }] })
      .expect(201);
    const covered = async () => {
      const body = (await manager.get('/api/replenishment').expect(200)).body;
      return {
        covered: body.covered.some((row: { item: { id: number } }) => row.item.id === swabs.id),
        toOrder: body.suppliers
          .flatMap((s: { lines: { item: { id: number } }[] }) => s.lines)
          .some((line: { item: { id: number } }) => line.item.id === swabs.id),
      };
    };
    expect(await covered()).toEqual({ covered: true, toOrder: false });

    const res = await manager.post(`/api/orders/${created.body.orderId}/cancel`).expect(200);
    expect(res.body).toMatchObject({
      orderId: created.body.orderId,
      status: 'cancelled',
      items: [expect.objectContaining({ itemId: swabs.id, receivedQuantity: 0 })],
    });
    expect((await t.db('orders').where({ order_id: created.body.orderId }).first()).status).toBe('cancelled');
    expect(
      await t.db('audit_log').where({ entity_type: 'order', entity_id: created.body.orderId, action: 'cancel' }),
    ).toEqual([
      expect.objectContaining({
        actor_user_id: managerId,
        before: { status: 'pending' },
        after: { status: 'cancelled' },
      }),
    ]);
    expect(await covered()).toEqual({ covered: false, toOrder: true });
    const listed = await user.get(`/api/orders?supplierId=${supplier.id}&status=cancelled`).expect(200);
    expect(listed.body.map((o: { orderId: string }) => o.orderId)).toEqual([created.body.orderId]);

    // a cancelled order is neither received nor cancelled again
    const receive = await manager
      .post(`/api/orders/${created.body.orderId}/receive`)
      .send({ receivedItems: [{ orderItemId: res.body.items[0].orderItemId, receivedQuantity: 1 }] })
      .expect(400);
    expect(receive.body.message).toBe(`Order ${created.body.orderId} has been cancelled`);
    const again = await manager.post(`/api/orders/${created.body.orderId}/cancel`).expect(409);
    expect(again.body.message).toBe(`Order ${created.body.orderId} is already cancelled`);
    expect(await stockOf(t.db, swabs.id)).toBe('0.00');
  });

  it('409 once anything is received, and the order stays as it was; 403 for a user, 404 for an unknown order', async () => {
    const supplier = await buildSupplier(t.db);
    const { order, lines } = await buildOrder(t.db, supplier.id, [
      { name: 'Part one', quantity: '4', unitCost: '1.00' },
      { name: 'Part two', quantity: '4', unitCost: '1.00' },
    ]);
    await user.post(`/api/orders/${order.id}/cancel`).expect(403);
    await manager.post('/api/orders/999999/cancel').expect(404);
    await manager
      .post(`/api/orders/${order.id}/receive`)
      .send({ receivedItems: [{ orderItemId: lines[1].id, receivedQuantity: 1 }] })
      .expect(200);
    const refused = await manager.post(`/api/orders/${order.order_id}/cancel`).expect(409);
    expect(refused.body.message).toBe('An order with received lines cannot be cancelled');
    expect((await t.db('orders').where({ id: order.id }).first()).status).toBe('partially_received');
    expect(
      await t.db('audit_log').where({ entity_type: 'order', entity_id: order.order_id, action: 'cancel' }),
    ).toHaveLength(0);
  });
});

describe('GET /api/orders/:id/purchase-order.pdf (issue 28)', () => {
  const pdfLines = async (pdf: Buffer) => {
    const parser = new PDFParse({ data: new Uint8Array(pdf) });
    try {
      return (await parser.getText()).text.split('\n').map((line) => line.replace(/\s+/g, ' ').trim());
    } finally {
      await parser.destroy();
    }
  };
  const download = (agent: supertest.Agent, orderId: string) =>
    agent
      .get(`/api/orders/${orderId}/purchase-order.pdf`)
      .buffer(true)
      .parse(binaryBody as never);

  it('200 a PDF to send the supplier: supplier, order number, date, lines with quantity, unit cost and line total, the total and where to deliver', async () => {
    const supplier = await buildSupplier(t.db, {
      name: 'Kappa Scientific Ltd',
      contact: 'Jo Sales',
      address: '4 Lab Lane\nOxford OX1 2AB',
      email: 'orders@kappa.example',
      phone: '01865 000000',
    });
    const gloves = await buildItem(t.db, { name: 'Nitrile gloves', sku: 'PO-GLV-1' });
    await manager
      .post(`/api/suppliers/${supplier.id}/items`)
      .send({ itemId: gloves.id, price: '1234.10', supplierSku: 'KS-4410' })
      .expect(201);
    const created = await manager
      .post('/api/orders')
      .send({
        supplierId: supplier.id,
        items: [
          { itemId: gloves.id, quantity: 3, unitCost: '1234.10' },
          { name: 'Cryo boxes (81 place)', quantity: '2.5', unitCost: '12.50' },
        ],
      })
      .expect(201);
    const orderId: string = created.body.orderId;
    await t
      .db('settings')
      .insert({
        key: 'purchasing.deliveryAddress',
        value: JSON.stringify({
          address: 'Chemistry Stores\nSouth Parks Road\nOxford OX1 3QR',
          contact: 'stores@chem.example.ac.uk',
        }),
      })
      .onConflict('key')
      .merge();
    onTestFinished(() => t.db('settings').where({ key: 'purchasing.deliveryAddress' }).delete());

    const res = await download(user, orderId).expect(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toMatch(
      new RegExp(`^attachment; filename="?purchase-order-${orderId}.pdf"?$`),
    );
    const lines = await pdfLines(res.body as Buffer);
    const today = new Intl.DateTimeFormat('en-GB', {
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      timeZone: 'Europe/London',
    }).format(new Date(created.body.createdAt));
    expect(lines).toEqual(
      expect.arrayContaining([
        'Purchase order',
        `Order number ${orderId}`,
        `Date ${today}`,
        'Kappa Scientific Ltd',
        'Jo Sales',
        '4 Lab Lane',
        'Oxford OX1 2AB',
        'Chemistry Stores',
        'South Parks Road',
        'stores@chem.example.ac.uk',
        'KS-4410 PO-GLV-1 Nitrile gloves 3 £1,234.10 £3,702.30',
        'Cryo boxes (81 place) 2.5 £12.50 £31.25',
        'Total £3,733.55',
      ]),
    );
    await t.db('settings').where({ key: 'purchasing.deliveryAddress' }).delete();
    const unset = await pdfLines((await download(user, orderId).expect(200)).body as Buffer);
    expect(unset).toEqual(expect.arrayContaining(['Deliver to', 'Stores']));
  });

  it('403 for a user under access.profile strict (it prints cost prices), 200 for a manager', async () => {
    const supplier = await buildSupplier(t.db, { name: 'Strict Supplies Ltd' });
    const created = await manager
      .post('/api/orders')
      .send({ supplierId: supplier.id, items: [{ name: 'Parafilm', quantity: 1, unitCost: '9.99' }] })
      .expect(201);
    await t
      .db('settings')
      .insert({ key: 'access.profile', value: JSON.stringify({ profile: 'strict' }) })
      .onConflict('key')
      .merge();
    onTestFinished(() => t.db('settings').where({ key: 'access.profile' }).delete());

    const refused = await user.get(`/api/orders/${created.body.orderId}/purchase-order.pdf`).expect(403);
    expect(refused.body.message).toBe('This action requires the manager role (setting access.profile is strict)');
    await download(manager, created.body.orderId).expect(200);
  });

  it('404 for an unknown order, 401 without a session', async () => {
    expect((await user.get('/api/orders/O999999/purchase-order.pdf').expect(404)).body.message).toBe('Order not found');
    await t.request.get('/api/orders/1/purchase-order.pdf').expect(401);
  });
});

describe('POST /api/orders/:id/add-to-inventory', () => {
  it('creates items for received lines without one, stocks them through the ledger and links them to the supplier', async () => {
    const supplier = await buildSupplier(t.db);
    const category = await buildCategory(t.db);
    const known = await buildItem(t.db, { currentStock: 0 });
    const { order, lines } = await buildOrder(t.db, supplier.id, [
      { name: 'Brand new reagent', quantity: '5', unitCost: '7.25', receivedQuantity: '3' },
      { name: 'Not yet arrived', quantity: '2', unitCost: '1.00' },
      { itemId: known.id, name: 'Known', quantity: '1', unitCost: '1.00', receivedQuantity: '1' },
    ]);
    const res = await manager
      .post(`/api/orders/${order.order_id}/add-to-inventory`)
      .send({ categoryId: category.id })
      .expect(200);
    expect(res.body.message).toBe('Created 1 inventory item(s)');
    expect(res.body.createdItems).toEqual([
      {
        orderItemId: lines[0].id,
        item: {
          id: expect.any(Number),
          name: 'Brand new reagent',
          sku: `${order.order_id}-${lines[0].id}`,
          categoryId: category.id,
        },
      },
    ]);
    const itemId = res.body.createdItems[0].item.id;
    const item = await t.db('items').where({ id: itemId }).first();
    expect(item).toMatchObject({
      current_stock: '3.00',
      price: '7.25',
      category_id: category.id,
      created_by: managerId,
      is_active: true,
    });
    expect(res.body.order.items[0].itemId).toBe(itemId);
    const movements = await movementsFor(order.order_id);
    expect(movements.map((m) => [m.item_id, m.type, m.quantity, m.previous_stock, m.new_stock])).toEqual([
      [itemId, 'in', '3.00', '0.00', '3.00'],
    ]);
    expect(await t.db('item_sources').where({ supplier_id: supplier.id, item_id: itemId }).first()).toMatchObject({
      price: '7.25',
    });
    expect(await stockOf(t.db, known.id)).toBe('0.00');

    // nothing left to add: 200 and no new items
    const again = await manager.post(`/api/orders/${order.id}/add-to-inventory`).expect(200);
    expect(again.body.createdItems).toEqual([]);
    // later receipts of that line now go to the new item
    await manager
      .post(`/api/orders/${order.id}/receive`)
      .send({ receivedItems: [{ orderItemId: lines[0].id, receivedQuantity: 2 }] })
      .expect(200);
    expect(await stockOf(t.db, itemId)).toBe('5.00');
  });

  it('takes the category from the setting when the request names none; 400 when neither; 404 unknown category', async () => {
    const supplier = await buildSupplier(t.db);
    const { order } = await buildOrder(t.db, supplier.id, [
      { name: 'Setting-driven', quantity: '2', unitCost: '1.00', receivedQuantity: '2' },
    ]);
    const none = await manager.post(`/api/orders/${order.id}/add-to-inventory`).send({}).expect(400);
    expect(none.body.message).toBe("No category given: send categoryId or set the setting 'orders.defaultCategoryId'");
    await manager.post(`/api/orders/${order.id}/add-to-inventory`).send({ categoryId: 999999 }).expect(404);
    expect(await t.db('items').where({ name: 'Setting-driven' })).toHaveLength(0);

    const category = await buildCategory(t.db);
    await t
      .db('settings')
      .insert({ key: 'orders.defaultCategoryId', value: JSON.stringify({ categoryId: category.id }) });
    const res = await manager.post(`/api/orders/${order.id}/add-to-inventory`).send({}).expect(200);
    expect(res.body.createdItems[0].item.categoryId).toBe(category.id);
    await t.db('settings').where({ key: 'orders.defaultCategoryId' }).delete();
  });

  it('uses the line sku when free; 400 for orderItemIds that are not eligible; 404 unknown order; 403 user', async () => {
    const supplier = await buildSupplier(t.db);
    const category = await buildCategory(t.db);
    await buildItem(t.db, { sku: 'TAKEN-SKU' });
    const { order, lines } = await buildOrder(t.db, supplier.id, [
      { name: 'With free sku', quantity: '1', unitCost: '1.00', receivedQuantity: '1' },
      { name: 'With taken sku', quantity: '1', unitCost: '1.00', receivedQuantity: '1' },
      { name: 'Not received', quantity: '1', unitCost: '1.00' },
    ]);
    await t.db('order_items').where({ id: lines[0].id }).update({ sku: 'FREE-SKU-1' });
    await t.db('order_items').where({ id: lines[1].id }).update({ sku: 'TAKEN-SKU' });
    const bad = await manager
      .post(`/api/orders/${order.id}/add-to-inventory`)
      .send({ categoryId: category.id, orderItemIds: [lines[2].id] })
      .expect(400);
    expect(bad.body.message).toBe(
      `Order line(s) ${lines[2].id} of order ${order.order_id} are not received lines without an item`,
    );
    await user.post(`/api/orders/${order.id}/add-to-inventory`).send({ categoryId: category.id }).expect(403);
    await manager.post('/api/orders/999999/add-to-inventory').send({ categoryId: category.id }).expect(404);
    const res = await manager
      .post(`/api/orders/${order.id}/add-to-inventory`)
      .send({ categoryId: category.id })
      .expect(200);
    expect(res.body.createdItems.map((c: { item: { sku: string } }) => c.item.sku)).toEqual([
      'FREE-SKU-1',
      `${order.order_id}-${lines[1].id}`,
    ]);
  });
});

describe("POST /api/orders/:id/add-to-inventory with each new item's SKU and price (issue 28)", () => {
  it('creates each item with the SKU and price given, the default markup when the price is left out; 409 naming a taken SKU', async () => {
    const supplier = await buildSupplier(t.db);
    const category = await buildCategory(t.db);
    await buildItem(t.db, { sku: 'TAKEN-LATER' });
    const { order, lines } = await buildOrder(t.db, supplier.id, [
      { name: 'Late reagent', quantity: '5', unitCost: '7.25', receivedQuantity: '3' },
      { name: 'Late buffer', quantity: '2', unitCost: '10.00', receivedQuantity: '2' },
    ]);
    await t
      .db('settings')
      .insert({ key: 'purchasing.defaultMarkup', value: JSON.stringify({ percent: 12.5 }) })
      .onConflict('key')
      .merge();
    onTestFinished(() => t.db('settings').where({ key: 'purchasing.defaultMarkup' }).delete());
    const taken = await manager
      .post(`/api/orders/${order.id}/add-to-inventory`)
      .send({
        categoryId: category.id,
        items: [
          { orderItemId: lines[0].id, sku: 'LATE-REAGENT' },
          { orderItemId: lines[1].id, sku: 'TAKEN-LATER' },
        ],
      })
      .expect(409);
    expect(taken.body.errors).toEqual([
      { field: 'items.1.sku', message: "An item with SKU 'TAKEN-LATER' already exists" },
    ]);
    expect(await t.db('items').where({ sku: 'LATE-REAGENT' })).toHaveLength(0);

    const res = await manager
      .post(`/api/orders/${order.id}/add-to-inventory`)
      .send({
        categoryId: category.id,
        items: [
          { orderItemId: lines[0].id, sku: 'LATE-REAGENT', price: '9.99' },
          { orderItemId: lines[1].id, sku: 'LATE-BUFFER' },
        ],
      })
      .expect(200);
    expect(res.body.createdItems.map((c: { item: { sku: string } }) => c.item.sku)).toEqual([
      'LATE-REAGENT',
      'LATE-BUFFER',
    ]);
    expect(await t.db('items').where({ sku: 'LATE-REAGENT' }).first()).toMatchObject({
      price: '9.99',
      current_stock: '3.00',
    });
    // 10.00 x 1.125
    expect(await t.db('items').where({ sku: 'LATE-BUFFER' }).first()).toMatchObject({
      price: '11.25',
      current_stock: '2.00',
    });
    const both = await manager
      .post(`/api/orders/${order.id}/add-to-inventory`)
      .send({ items: [{ orderItemId: lines[0].id, sku: 'X' }], orderItemIds: [lines[0].id] })
      .expect(400);
    expect(both.body.errors).toEqual([{ field: 'items', message: 'send items or orderItemIds, not both' }]);
  });
});

describe('GET /api/items/:id/order-history', () => {
  it('200 lists the orders of the item newest first, and survives a permanent delete of the item', async () => {
    const supplier = await buildSupplier(t.db, { name: 'History Supplier' });
    const item = await buildItem(t.db);
    const first = await buildOrder(
      t.db,
      supplier.id,
      [{ itemId: item.id, name: 'H', quantity: '3', unitCost: '2.50' }],
      {
        createdAt: new Date('2026-02-01T10:00:00Z'),
      },
    );
    const second = await buildOrder(
      t.db,
      supplier.id,
      [{ itemId: item.id, name: 'H', quantity: '1.5', unitCost: '3.00', receivedQuantity: '1.5' }],
      {
        status: 'received',
      },
    );
    const res = await user.get(`/api/items/${item.id}/order-history`).expect(200);
    expect(res.body).toEqual({
      orders: [
        {
          orderId: second.order.order_id,
          orderDate: expect.any(String),
          supplier: 'History Supplier',
          quantity: 1.5,
          receivedQuantity: 1.5,
          unitCost: 3,
          status: 'received',
        },
        {
          orderId: first.order.order_id,
          orderDate: '2026-02-01T10:00:00.000Z',
          supplier: 'History Supplier',
          quantity: 3,
          receivedQuantity: 0,
          unitCost: 2.5,
          status: 'pending',
        },
      ],
    });

    await t.db('items').where({ id: item.id }).delete();
    const line = await t.db('order_items').where({ id: first.lines[0].id }).first();
    expect(line).toMatchObject({ item_id: null, name: 'H' });
    await user.get(`/api/items/${item.id}/order-history`).expect(404);
  });

  it('404 for an unknown item, 400 for a malformed id, 401 without a session', async () => {
    expect((await user.get('/api/items/999999/order-history').expect(404)).body.message).toBe('Item not found');
    await user.get('/api/items/abc/order-history').expect(400);
    await t.request.get('/api/items/1/order-history').expect(401);
  });
});

describe('GET /api/orders/import-template/json and /csv, POST /api/orders/import-from-invoice', () => {
  it('the JSON template, sent back as it is, creates a pending order; the supplier is created once then matched by name', async () => {
    const tpl = await user.get('/api/orders/import-template/json').expect(200);
    expect(tpl.headers['content-type']).toMatch(/application\/json/);
    expect(tpl.headers['content-disposition']).toMatch(/attachment; filename="?order-import-template.json/);
    const body = JSON.parse(tpl.text);
    const glove = await buildItem(t.db, { sku: 'GLV-100', name: 'Some other name' });

    // The CSV template's test may have created this supplier already; it is created only if it does not exist.
    const existed =
      (await t.db('suppliers').whereRaw('lower(name) = ?', ['example supplies ltd']).first()) !== undefined;
    const res = await manager.post('/api/orders/import-from-invoice').send(body).expect(201);
    expect(res.body).toMatchObject({ success: true, supplierCreated: !existed, matchedItems: 1, unmatchedItems: 1 });
    expect(res.body.order).toMatchObject({
      status: 'pending',
      invoiceNumber: 'INV-0001',
      notes: 'Optional notes for the order',
      totalAmount: '106.25',
    });
    expect(res.body.order.items.map((l: { itemId: number | null }) => l.itemId)).toEqual([glove.id, null]);
    const supplierId = res.body.order.supplierId;
    expect(await t.db('suppliers').where({ id: supplierId }).first()).toMatchObject({ name: 'Example Supplies Ltd' });

    const again = await manager
      .post('/api/orders/import-from-invoice')
      .send({ parsedData: { ...body.parsedData, supplier: 'EXAMPLE supplies ltd' } })
      .expect(201);
    expect(again.body).toMatchObject({ supplierCreated: false });
    expect(again.body.order.supplierId).toBe(supplierId);
  });

  it('matches lines by exact name and accepts the upload-invoice field names (supplierName, unitPrice)', async () => {
    const item = await buildItem(t.db, { name: 'Exact Name Match' });
    const res = await manager
      .post('/api/orders/import-from-invoice')
      .send({
        parsedData: {
          supplierName: 'Alias Supplier',
          items: [{ name: 'exact name match', quantity: 2, unitPrice: '1.50' }],
        },
      })
      .expect(201);
    expect(res.body.order.items[0]).toMatchObject({ itemId: item.id, name: 'exact name match', unitCost: '1.50' });
  });

  it('the CSV template, sent back in the multipart field csv, creates the same order', async () => {
    const tpl = await user.get('/api/orders/import-template/csv').expect(200);
    expect(tpl.headers['content-type']).toMatch(/text\/csv/);
    expect(tpl.text.split('\n')[0]).toBe('supplier,invoiceNumber,notes,name,sku,quantity,unitCost');
    const res = await manager
      .post('/api/orders/import-from-invoice')
      .attach('csv', Buffer.from(tpl.text), { filename: 'order.csv', contentType: 'text/csv' })
      .field('notes', 'from csv')
      .expect(201);
    expect(res.body.order).toMatchObject({
      invoiceNumber: 'INV-0001',
      notes: 'from csv',
      totalAmount: '106.25',
      hasInvoice: false,
    });
    expect(res.body.order.items.map((l: { name: string }) => l.name)).toEqual([
      'Nitrile gloves (box of 100)',
      'Pipette tips 200ul',
    ]);
  });

  it('400 for an empty or invalid body, a CSV without the columns, no file; 403 for a user', async () => {
    await manager.post('/api/orders/import-from-invoice').send({}).expect(400);
    const bad = await manager
      .post('/api/orders/import-from-invoice')
      .send({ parsedData: { supplier: 'S', items: [{ name: 'A', quantity: -1, unitCost: 1 }] } })
      .expect(400);
    expect(bad.body.errors).toContainEqual(expect.objectContaining({ field: 'parsedData.items.0.quantity' }));
    const csv = await manager
      .post('/api/orders/import-from-invoice')
      .attach('csv', Buffer.from('foo,bar\n1,2\n'), { filename: 'x.csv', contentType: 'text/csv' })
      .expect(400);
    expect(csv.body.message).toMatch(/needs the columns/);
    const none = await manager.post('/api/orders/import-from-invoice').field('supplier', 'S').expect(400);
    expect(none.body.message).toMatch(/No file uploaded/);
    await user
      .post('/api/orders/import-from-invoice')
      .send({ parsedData: { supplier: 'S', items: [{ name: 'A', quantity: 1, unitCost: 1 }] } })
      .expect(403);
  });
});

describe('POST /api/orders/import-from-invoice (multipart form merging)', () => {
  it('text fields override what the CSV says; 400 when both a PDF and a CSV are sent, and nothing is created', async () => {
    const csv =
      'supplier,invoiceNumber,notes,name,sku,quantity,unitCost\nCsv Supplier Ltd,CSV-1,csv notes,Merged line,,2,1.25\n';
    const res = await manager
      .post('/api/orders/import-from-invoice')
      .attach('csv', Buffer.from(csv), { filename: 'o.csv', contentType: 'text/csv' })
      .field('supplier', 'Field Supplier Ltd')
      .field('invoiceNumber', 'FIELD-9')
      .expect(201);
    expect(res.body).toMatchObject({ success: true, supplierCreated: true, matchedItems: 0, unmatchedItems: 1 });
    expect(res.body).not.toHaveProperty('extractedData');
    expect(res.body.message).toBe(
      `Order ${res.body.order.orderId} created with 1 line(s), 0 matched to inventory items`,
    );
    expect(res.body.order).toMatchObject({
      invoiceNumber: 'FIELD-9',
      notes: 'csv notes',
      totalAmount: '2.50',
      supplier: { name: 'Field Supplier Ltd' },
    });

    const before = await t.db('orders').count<{ count: number }[]>('* as count');
    const both = await manager
      .post('/api/orders/import-from-invoice')
      .attach('invoice', await invoicePdf(0), 'a.pdf')
      .attach('csv', Buffer.from(csv), { filename: 'o.csv', contentType: 'text/csv' })
      .expect(400);
    expect(both.body.message).toBe("Send either an invoice PDF ('invoice') or a CSV file ('csv'), not both");
    expect(await t.db('orders').count<{ count: number }[]>('* as count')).toEqual(before);
  });
});

describe('POST /api/orders/:id/receive (a line listed twice)', () => {
  it('400 names the line, and nothing is received', async () => {
    const supplier = await buildSupplier(t.db);
    const item = await buildItem(t.db, { currentStock: 1 });
    const { order, lines } = await buildOrder(t.db, supplier.id, [
      { itemId: item.id, name: 'Twice', quantity: '5', unitCost: '1.00' },
    ]);
    const res = await manager
      .post(`/api/orders/${order.id}/receive`)
      .send({
        receivedItems: [
          { orderItemId: lines[0].id, receivedQuantity: 1 },
          { orderItemId: lines[0].id, receivedQuantity: 1 },
        ],
      })
      .expect(400);
    expect(res.body.message).toBe(`Order line ${lines[0].id} is listed more than once`);
    expect(await stockOf(t.db, item.id)).toBe('1.00');
    expect(await t.db('order_items').where({ id: lines[0].id }).first()).toMatchObject({ received_quantity: '0.00' });
  });
});

describe('SQL statements per request (orders)', () => {
  /** The statements the app's pool runs while `run` is under way (the session store has its own pool). */
  async function statements(run: () => Promise<unknown>): Promise<number> {
    let count = 0;
    const onQuery = () => {
      count += 1;
    };
    t.db.on('query', onQuery);
    try {
      await run();
    } finally {
      t.db.off('query', onQuery);
    }
    return count;
  }

  it('no more than before the orders module was split', async () => {
    const supplier = await buildSupplier(t.db, { name: 'Round Trip Supplies' });
    const category = await buildCategory(t.db);
    const a = await buildItem(t.db, {
      name: 'Round trip alpha',
      sku: 'RT-ALPHA',
      currentStock: 5,
      categoryId: category.id,
    });
    const b = await buildItem(t.db, { name: 'Round trip beta', sku: 'RT-BETA', categoryId: category.id });
    const counts: Record<string, number> = {};

    counts.list = await statements(() => manager.get('/api/orders').expect(200));
    let orderId = '';
    counts.create = await statements(async () => {
      const res = await manager
        .post('/api/orders')
        .send({
          supplierId: supplier.id,
          items: [
            { itemId: b.id, quantity: 2, unitCost: '1.00' },
            { itemId: a.id, quantity: 3, unitCost: '1.00' },
            { name: 'Round trip free text', quantity: 1, unitCost: 1 },
          ],
        })
        .expect(201);
      orderId = res.body.orderId;
    });
    counts.get = await statements(() => manager.get(`/api/orders/${orderId}`).expect(200));
    const detail = (await manager.get(`/api/orders/${orderId}`).expect(200)).body;
    const receivedItems = detail.items.map((l: { orderItemId: number }) => ({
      orderItemId: l.orderItemId,
      receivedQuantity: 1,
    }));
    counts.receive = await statements(() =>
      manager.post(`/api/orders/${orderId}/receive`).send({ receivedItems }).expect(200),
    );
    counts.addToInventory = await statements(() =>
      manager.post(`/api/orders/${orderId}/add-to-inventory`).send({ categoryId: category.id }).expect(200),
    );
    counts.importJson = await statements(() =>
      manager
        .post('/api/orders/import-from-invoice')
        .send({
          parsedData: {
            supplier: 'round trip supplies',
            items: [
              { name: 'round trip alpha', quantity: 1, unitCost: 1 },
              { name: 'x', sku: 'rt-beta', quantity: 1, unitCost: 1 },
              { name: 'nothing like it', quantity: 1, unitCost: 1 },
            ],
          },
        })
        .expect(201),
    );
    counts.importCsv = await statements(() =>
      manager
        .post('/api/orders/import-from-invoice')
        .attach(
          'csv',
          Buffer.from('supplier,name,sku,quantity,unitCost\nRound Trip Supplies,Round trip alpha,,1,1\n'),
          'o.csv',
        )
        .expect(201),
    );
    const pdf = await invoicePdf(0);
    counts.importPdf = await statements(() =>
      manager.post('/api/orders/import-from-invoice').attach('invoice', pdf, 'a.pdf').expect(201),
    );
    counts.attachInvoice = await statements(() =>
      manager.post(`/api/orders/${orderId}/upload-invoice`).attach('invoice', pdf, 'a.pdf').expect(200),
    );
    counts.invoicePdf = await statements(() => manager.get(`/api/orders/${orderId}/invoice-pdf`).expect(200));
    counts.itemHistory = await statements(() => manager.get(`/api/items/${a.id}/order-history`).expect(200));

    // measured on the code before the split (BEGIN and COMMIT count as statements); receive and addToInventory + 1 since each writes an audit row (the order's receipt; the created item);
    // issue 28: the imports + 1 to record the matched items' sources at the invoice price, and + 1 to read an existing supplier's part numbers
    // (importCsv's supplier exists, importJson's and importPdf's are created), while the items are found in one statement where sku and name took two;
    // addToInventory + 1 more since it reads the default markup that prices the new item;
    // issue 31: addToInventory + 1 for the advisory lock on the new SKU's code (the SKU check reads the barcodes in the same statement)
    // issue 32: receive and addToInventory + 1 to read the outbound webhooks subscribed to their events (order.received, stock.low), once per transaction
    const before = {
      list: 1,
      create: 9,
      get: 3,
      receive: 14,
      addToInventory: 21,
      importJson: 11,
      importCsv: 11,
      importPdf: 11,
      attachInvoice: 6,
      invoicePdf: 2,
      itemHistory: 2,
    };
    for (const [request, limit] of Object.entries(before)) expect(counts[request], request).toBeLessThanOrEqual(limit);
  });
});
