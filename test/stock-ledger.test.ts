import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeStock, changeStockMany } from '../src/modules/stock-movements/stock-movements.ledger';
import { itemStock } from '../src/modules/items/items.queries';
import { testApp, type TestApp } from './helpers/app';
import { buildItem, buildUser } from './helpers/factories';
import { stockOf } from './helpers/inventory-factories';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const movementsOf = (id: number) => t.db('stock_movements').where({ item_id: id }).orderBy('id');

describe('changeStock', () => {
  it('writes one movement per change whose signed quantities sum to the stock change', async () => {
    const user = await buildUser(t.db);
    const item = await buildItem(t.db, { currentStock: 10 });
    await changeStock(t.db, itemStock, {
      itemId: item.id,
      type: 'in',
      quantity: 5,
      reason: 'delivery',
      performedBy: user.id,
    });
    await changeStock(t.db, itemStock, {
      itemId: item.id,
      type: 'out',
      quantity: '2.5',
      reason: 'used',
      performedBy: user.id,
    });
    await changeStock(t.db, itemStock, {
      itemId: item.id,
      type: 'adjustment',
      quantity: 7,
      reason: 'count',
      performedBy: user.id,
    });

    expect(await stockOf(t.db, item.id)).toBe('7.00');
    const movements = await movementsOf(item.id);
    expect(movements.map((m) => [m.type, m.quantity, m.previous_stock, m.new_stock])).toEqual([
      ['in', '5.00', '10.00', '15.00'],
      ['out', '-2.50', '15.00', '12.50'],
      ['adjustment', '-5.50', '12.50', '7.00'],
    ]);
    const sum = movements.reduce((acc, m) => acc + Number(m.quantity), 0);
    expect(10 + sum).toBe(7);
  });

  it('refuses to go below zero and writes nothing', async () => {
    const item = await buildItem(t.db, { name: 'Pipette tips', currentStock: 1 });
    await expect(
      changeStock(t.db, itemStock, { itemId: item.id, type: 'out', quantity: 2, reason: '', performedBy: null }),
    ).rejects.toMatchObject({
      status: 400,
      message: "Insufficient stock for item 'Pipette tips'. Current stock: 1, Required: 2",
    });
    await expect(
      changeStock(t.db, itemStock, {
        itemId: item.id,
        type: 'adjustment',
        quantity: -1,
        reason: '',
        performedBy: null,
      }),
    ).rejects.toMatchObject({ status: 400 });
    expect(await stockOf(t.db, item.id)).toBe('1.00');
    expect(await movementsOf(item.id)).toHaveLength(0);
  });

  it('lets exactly one of many parallel outs take the last unit', async () => {
    const item = await buildItem(t.db, { currentStock: 1 });
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        changeStock(t.db, itemStock, { itemId: item.id, type: 'out', quantity: 1, reason: 'race', performedBy: null }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(await stockOf(t.db, item.id)).toBe('0.00');
    expect(await movementsOf(item.id)).toHaveLength(1);
  });

  it('404 for an unknown item', async () => {
    await expect(
      changeStock(t.db, itemStock, { itemId: 999999, type: 'in', quantity: 1, reason: '', performedBy: null }),
    ).rejects.toMatchObject({ status: 404 });
  });
});

describe('changeStockMany', () => {
  it('applies a batch in order: changes to one item chain, items are written once, movements keep the batch order', async () => {
    const user = await buildUser(t.db);
    const [a, b] = [await buildItem(t.db, { currentStock: 10 }), await buildItem(t.db, { currentStock: 1 })];
    const movements = await changeStockMany(t.db, itemStock, [
      {
        itemId: b.id,
        type: 'in',
        quantity: 4,
        reason: 'delivery',
        performedBy: user.id,
        reference: { type: 'order', id: 'O7' },
      },
      { itemId: a.id, type: 'out', quantity: '2.5', reason: 'used', performedBy: user.id },
      { itemId: a.id, type: 'adjustment', quantity: 3, reason: 'count', performedBy: null },
      { itemId: b.id, type: 'out', quantity: 5, reason: 'all of it', performedBy: user.id },
    ]);

    expect(
      movements.map((m) => [m.item_id, m.type, m.quantity, m.previous_stock, m.new_stock, m.reference_id]),
    ).toEqual([
      [b.id, 'in', '4.00', '1.00', '5.00', 'O7'],
      [a.id, 'out', '-2.50', '10.00', '7.50', null],
      [a.id, 'adjustment', '-4.50', '7.50', '3.00', null],
      [b.id, 'out', '-5.00', '5.00', '0.00', null],
    ]);
    expect([await stockOf(t.db, a.id), await stockOf(t.db, b.id)]).toEqual(['3.00', '0.00']);
    expect((await movementsOf(a.id)).map((m) => m.id)).toEqual(
      movements.filter((m) => m.item_id === a.id).map((m) => m.id),
    );
  });

  it('refuses the whole batch when any change is refused: an unknown item, a level below zero, a zero quantity', async () => {
    const item = await buildItem(t.db, { name: 'Burette', currentStock: 2 });
    const first = { itemId: item.id, type: 'out' as const, quantity: 1, reason: 'first', performedBy: null };
    await expect(changeStockMany(t.db, itemStock, [first, { ...first, itemId: 999999 }])).rejects.toMatchObject({
      status: 404,
    });
    await expect(changeStockMany(t.db, itemStock, [first, { ...first, quantity: 2 }])).rejects.toMatchObject({
      status: 400,
      message: "Insufficient stock for item 'Burette'. Current stock: 1, Required: 2",
    });
    await expect(changeStockMany(t.db, itemStock, [first, { ...first, quantity: 0 }])).rejects.toMatchObject({
      status: 400,
      message: 'Quantity must be greater than zero',
    });
    expect(await stockOf(t.db, item.id)).toBe('2.00');
    expect(await movementsOf(item.id)).toHaveLength(0);
  });
});

describe('the ledger publishes the stock.low crossings itself', () => {
  it('every kind of change that takes an item from above its minimum to at or below it queues one stock.low; a refused batch none', async () => {
    const [hook] = await t
      .db('outbound_webhooks')
      .insert({ url: 'https://hooks.example.org/ledger', events: ['stock.low'], secret: 'whsec-ledger-0123456789' })
      .returning('id');
    try {
      const lowOf = async () =>
        (await t.db('outbox_messages').where({ kind: 'stock.low', destination: hook.id }).orderBy('seq')).map(
          (m) => m.payload.data.sku,
        );
      const counted = await buildItem(t.db, { sku: 'LOW-COUNTED', currentStock: 10, minimumStock: 5 });
      const taken = await buildItem(t.db, { sku: 'LOW-TAKEN', currentStock: 6, minimumStock: 3 });
      const already = await buildItem(t.db, { sku: 'LOW-ALREADY', currentStock: 2, minimumStock: 3 });
      const refilled = await buildItem(t.db, { sku: 'LOW-REFILLED', currentStock: 1, minimumStock: 3 });
      const change = { reason: 'ledger', performedBy: null };

      // one batch: an adjustment below the minimum, an out to exactly the minimum (low), an out of an
      // item low already and an in that lifts one above it: two crossings, one event each
      await changeStockMany(t.db, itemStock, [
        { ...change, itemId: counted.id, type: 'adjustment', quantity: 4 },
        { ...change, itemId: taken.id, type: 'out', quantity: 3 },
        { ...change, itemId: already.id, type: 'out', quantity: 1 },
        { ...change, itemId: refilled.id, type: 'in', quantity: 5 },
      ]);
      expect((await lowOf()).sort()).toEqual(['LOW-COUNTED', 'LOW-TAKEN']);

      // an in and an out within one batch that ends above the minimum, then a single out that crosses
      await changeStockMany(t.db, itemStock, [
        { ...change, itemId: refilled.id, type: 'out', quantity: 2 },
        { ...change, itemId: refilled.id, type: 'in', quantity: 1 },
      ]);
      await changeStock(t.db, itemStock, { ...change, itemId: refilled.id, type: 'out', quantity: 2 });
      expect((await lowOf()).sort()).toEqual(['LOW-COUNTED', 'LOW-REFILLED', 'LOW-TAKEN']);

      // a refused batch writes nothing and publishes nothing
      const before = await buildItem(t.db, { sku: 'LOW-REFUSED', currentStock: 4, minimumStock: 2 });
      await expect(
        changeStockMany(t.db, itemStock, [
          { ...change, itemId: before.id, type: 'out', quantity: 3 },
          { ...change, itemId: before.id, type: 'out', quantity: 5 },
        ]),
      ).rejects.toMatchObject({ status: 400 });
      expect(await lowOf()).toHaveLength(3);
    } finally {
      await t.db('outbound_webhooks').where({ id: hook.id }).del();
    }
  });
});
