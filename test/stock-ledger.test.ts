import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeStock } from '../src/modules/stock-movements/stock-ledger';
import { testApp, type TestApp } from './helpers/app';
import { buildItem, buildUser } from './helpers/factories';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const stockOf = async (id: number) => (await t.db('items').where({ id }).first('current_stock')).current_stock as string;
const movementsOf = (id: number) => t.db('stock_movements').where({ item_id: id }).orderBy('id');

describe('changeStock', () => {
  it('writes one movement per change whose signed quantities sum to the stock change', async () => {
    const user = await buildUser(t.db);
    const item = await buildItem(t.db, { currentStock: 10 });
    await changeStock(t.db, { itemId: item.id, type: 'in', quantity: 5, reason: 'delivery', performedBy: user.id });
    await changeStock(t.db, { itemId: item.id, type: 'out', quantity: '2.5', reason: 'used', performedBy: user.id });
    await changeStock(t.db, { itemId: item.id, type: 'adjustment', quantity: 7, reason: 'count', performedBy: user.id });

    expect(await stockOf(item.id)).toBe('7.00');
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
    await expect(changeStock(t.db, { itemId: item.id, type: 'out', quantity: 2, reason: '', performedBy: null })).rejects.toMatchObject({
      status: 400,
      message: "Insufficient stock for item 'Pipette tips'. Current stock: 1, Required: 2",
    });
    await expect(changeStock(t.db, { itemId: item.id, type: 'adjustment', quantity: -1, reason: '', performedBy: null })).rejects.toMatchObject({ status: 400 });
    expect(await stockOf(item.id)).toBe('1.00');
    expect(await movementsOf(item.id)).toHaveLength(0);
  });

  it('lets exactly one of many parallel outs take the last unit', async () => {
    const item = await buildItem(t.db, { currentStock: 1 });
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => changeStock(t.db, { itemId: item.id, type: 'out', quantity: 1, reason: 'race', performedBy: null })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(await stockOf(item.id)).toBe('0.00');
    expect(await movementsOf(item.id)).toHaveLength(1);
  });

  it('404 for an unknown item', async () => {
    await expect(changeStock(t.db, { itemId: 999999, type: 'in', quantity: 1, reason: '', performedBy: null })).rejects.toMatchObject({ status: 404 });
  });
});
