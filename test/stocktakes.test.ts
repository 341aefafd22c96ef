import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerMismatches } from '../src/modules/items/items.queries';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem, buildUser } from './helpers/factories';
import { agentsByRole, buildStockedItem, movementsOf, stockOf, type Agents } from './helpers/inventory-factories';
import { buildChargeCode } from './helpers/sales-factories';
import { stocktakesService } from '../src/modules/stocktakes/stocktakes.service';

let t: TestApp;
let a: Agents;
let chargeCode: string;

beforeAll(async () => {
  t = await testApp();
  a = await agentsByRole(t);
  chargeCode = (await buildChargeCode(t.db)).code;
});
afterAll(() => t.close());

/** A category of its own with stocked items, so each test's scope is its own. */
async function stockedCategory(stocks: number[], price = '2.50') {
  const category = await buildCategory(t.db);
  const items = [];
  for (const stock of stocks) items.push(await buildStockedItem(t.db, stock, { categoryId: category.id, price }));
  return { category, items };
}

async function create(body: object) {
  const res = await a.manager.post('/api/stocktakes').send(body).expect(201);
  return res.body as { id: number; reference: string; lines: { itemId: number }[] };
}

const count = (agent: Agents['user'], id: number, body: object) =>
  agent.post(`/api/stocktakes/${id}/counts`).send(body);

describe('POST /api/stocktakes', () => {
  it('creates an open stocktake with one uncounted line per active item in scope', async () => {
    const { category, items } = await stockedCategory([5, 7]);
    await buildItem(t.db, { categoryId: category.id, isActive: false });
    const res = await a.manager
      .post('/api/stocktakes')
      .send({ name: 'Shelf A', scope: { categoryIds: [category.id] } })
      .expect(201);
    expect(res.body).toMatchObject({
      name: 'Shelf A',
      status: 'open',
      blind: false,
      scope: { categoryIds: [category.id] },
      createdBy: { id: a.ids.manager },
      totals: { linesTotal: 2, linesCounted: 0, linesFound: 0, itemsWithVariance: 0, varianceValue: '0.00' },
    });
    expect(res.body.reference).toMatch(/^ST-\d{8}-\d+$/);
    expect(res.body.reference.slice(3, 11)).toBe(new Date().toISOString().slice(0, 10).replaceAll('-', ''));
    expect(res.body.lines.map((l: { itemId: number }) => l.itemId).sort()).toEqual(items.map((i) => i.id).sort());
    for (const line of res.body.lines) {
      expect(line).toMatchObject({
        expected: null,
        counted: null,
        variance: null,
        varianceValue: null,
        countedBy: null,
      });
    }
    const audit = await t.db('audit_log').where({ entity_type: 'stocktake', entity_id: res.body.reference });
    expect(audit).toMatchObject([{ action: 'create', actor_user_id: a.ids.manager }]);
  });

  it('numbers stocktakes from a sequence, never twice', async () => {
    const { items } = await stockedCategory([1]);
    const refs = await Promise.all(
      Array.from({ length: 5 }, () => create({ scope: { itemIds: [items[0].id] } }).then((s) => s.reference)),
    );
    expect(new Set(refs).size).toBe(5);
  });

  it('refuses unknown ids naming them, an empty or mixed scope, and callers below manager', async () => {
    const { category } = await stockedCategory([1]);
    const unknownCategory = await a.manager
      .post('/api/stocktakes')
      .send({ scope: { categoryIds: [category.id, 999999, 999998] } })
      .expect(400);
    expect(unknownCategory.body.message).toBe('Unknown category id(s): 999999, 999998');
    const unknownItem = await a.manager
      .post('/api/stocktakes')
      .send({ scope: { itemIds: [999997] } })
      .expect(400);
    expect(unknownItem.body.message).toBe('Unknown item id(s): 999997');
    await a.manager.post('/api/stocktakes').send({ scope: {} }).expect(400);
    await a.manager
      .post('/api/stocktakes')
      .send({ scope: { categoryIds: [] } })
      .expect(400);
    await a.manager
      .post('/api/stocktakes')
      .send({ scope: { all: true, itemIds: [1] } })
      .expect(400);
    await a.manager.post('/api/stocktakes').send({}).expect(400);
    const empty = await buildCategory(t.db);
    const none = await a.manager
      .post('/api/stocktakes')
      .send({ scope: { categoryIds: [empty.id] } })
      .expect(400);
    expect(none.body.message).toBe('No active items in the scope');
    await a.user
      .post('/api/stocktakes')
      .send({ scope: { all: true } })
      .expect(403);
    await t.request
      .post('/api/stocktakes')
      .send({ scope: { all: true } })
      .expect(401);
  });
});

describe('counting', () => {
  it('adds by default, sets on request, and takes expected from the stock when first counted', async () => {
    const { items } = await stockedCategory([10, 4]);
    const st = await create({ scope: { itemIds: items.map((i) => i.id) } });
    const first = await count(a.user, st.id, { code: items[0].sku, quantity: 3 }).expect(200);
    expect(first.body).toMatchObject({
      itemId: items[0].id,
      sku: items[0].sku,
      expected: 10,
      counted: 3,
      variance: -7,
      unitPrice: '2.50',
      varianceValue: '-17.50',
      found: false,
      countedBy: { id: a.ids.user },
      count: { mode: 'add', quantity: 3, previousCounted: null, counted: 3 },
    });
    const second = await count(a.manager, st.id, { itemId: items[0].id, quantity: 4 }).expect(200);
    expect(second.body).toMatchObject({ counted: 7, expected: 10, countedBy: { id: a.ids.manager } });
    const set = await count(a.user, st.id, { code: items[0].sku.toLowerCase(), quantity: 10, mode: 'set' }).expect(200);
    expect(set.body).toMatchObject({ counted: 10, variance: 0, count: { mode: 'set', previousCounted: 7 } });
    const decimal = await count(a.user, st.id, { itemId: items[1].id, quantity: '1.25' }).expect(200);
    expect(decimal.body).toMatchObject({ counted: 1.25, expected: 4, variance: -2.75, varianceValue: '-6.88' });

    const read = await a.user.get(`/api/stocktakes/${st.id}`).expect(200);
    expect(read.body.totals).toMatchObject({ linesTotal: 2, linesCounted: 2, itemsWithVariance: 1 });
  });

  it('answers 404 for an unknown code, item or stocktake, and 400 for bad input', async () => {
    const { items } = await stockedCategory([1]);
    const st = await create({ scope: { itemIds: [items[0].id] } });
    const unknown = await count(a.user, st.id, { code: 'NO-SUCH-CODE', quantity: 1 }).expect(404);
    expect(unknown.body).toEqual({ message: "No item with barcode 'NO-SUCH-CODE'" });
    const unknownItem = await count(a.user, st.id, { itemId: 999999, quantity: 1 }).expect(404);
    expect(unknownItem.body.message).toBe('Item not found');
    const unknownStocktake = await count(a.user, 999999, { itemId: items[0].id, quantity: 1 }).expect(404);
    expect(unknownStocktake.body.message).toBe('Stocktake not found');
    await count(a.user, st.id, { code: items[0].sku, quantity: -1 }).expect(400);
    await count(a.user, st.id, { code: items[0].sku, quantity: '1.234' }).expect(400);
    await count(a.user, st.id, { quantity: 1 }).expect(400);
    await count(a.user, st.id, { code: items[0].sku, itemId: items[0].id, quantity: 1 }).expect(400);
    await count(a.user, st.id, { code: items[0].sku, quantity: 1, mode: 'replace' }).expect(400);
    await t.request.post(`/api/stocktakes/${st.id}/counts`).send({ code: items[0].sku, quantity: 1 }).expect(401);
    await a.user.get('/api/stocktakes/999999').expect(404);
  });

  it('adds an item outside the scope as a found line', async () => {
    const { items } = await stockedCategory([2]);
    const outside = await buildStockedItem(t.db, 6);
    const st = await create({ scope: { itemIds: [items[0].id] } });
    const found = await count(a.user, st.id, { code: outside.sku, quantity: 5 }).expect(200);
    expect(found.body).toMatchObject({ itemId: outside.id, found: true, expected: 6, counted: 5, variance: -1 });
    const read = await a.manager.get(`/api/stocktakes/${st.id}`).expect(200);
    expect(read.body.totals).toMatchObject({ linesTotal: 2, linesCounted: 1, linesFound: 1 });
  });

  it('sums two people counting the same item at the same time', async () => {
    const { items } = await stockedCategory([100]);
    const st = await create({ scope: { itemIds: [items[0].id] } });
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        count(i % 2 ? a.user : a.manager, st.id, { code: items[0].sku, quantity: 1 }),
      ),
    ).then((results) => results.forEach((r) => expect(r.status).toBe(200)));
    const read = await a.manager.get(`/api/stocktakes/${st.id}`).expect(200);
    expect(read.body.lines[0]).toMatchObject({ counted: 20, expected: 100 });
    expect(await t.db('stocktake_counts').where({ stocktake_id: st.id })).toHaveLength(20);
  });

  it('undoes a scan: an add takes its quantity back, a set its change; the last undo uncounts the line', async () => {
    const { items } = await stockedCategory([8]);
    const outside = await buildStockedItem(t.db, 1);
    const st = await create({ scope: { itemIds: [items[0].id] } });
    const c1 = (await count(a.user, st.id, { code: items[0].sku, quantity: 2 }).expect(200)).body.count.id;
    const c2 = (await count(a.user, st.id, { code: items[0].sku, quantity: 5, mode: 'set' }).expect(200)).body.count.id;
    const c3 = (await count(a.manager, st.id, { code: items[0].sku, quantity: 1 }).expect(200)).body.count.id;

    const recent = await a.user.get(`/api/stocktakes/${st.id}/counts`).expect(200);
    expect(recent.body.counts.map((c: { id: number }) => c.id)).toEqual([c3, c2, c1]);

    const undoSet = await a.user.delete(`/api/stocktakes/${st.id}/counts/${c2}`).expect(200);
    // 6 - (5 - 2): the set's change is taken back, the later add kept
    expect(undoSet.body).toMatchObject({ count: { id: c2 }, line: { counted: 3, countedBy: { id: a.ids.manager } } });
    expect(undoSet.body.count.undoneAt).not.toBeNull();
    const again = await a.user.delete(`/api/stocktakes/${st.id}/counts/${c2}`).expect(409);
    expect(again.body.message).toBe(`Count ${c2} is already undone`);
    // another person's scan is theirs to take back, or a manager's
    const notMine = await a.user.delete(`/api/stocktakes/${st.id}/counts/${c3}`).expect(403);
    expect(notMine.body.message).toBe('Only the person who scanned it or a manager can undo a scan');
    expect(await t.db('stocktake_counts').where({ id: c3 }).first('undone_at')).toEqual({ undone_at: null });
    await a.manager.delete(`/api/stocktakes/${st.id}/counts/${c3}`).expect(200);
    const last = await a.user.delete(`/api/stocktakes/${st.id}/counts/${c1}`).expect(200);
    expect(last.body.line).toMatchObject({ counted: null, expected: null, countedBy: null, countedAt: null });

    const f = (await count(a.user, st.id, { code: outside.sku, quantity: 1 }).expect(200)).body.count.id;
    const removed = await a.user.delete(`/api/stocktakes/${st.id}/counts/${f}`).expect(200);
    expect(removed.body.line).toBeNull();
    const read = await a.manager.get(`/api/stocktakes/${st.id}`).expect(200);
    expect(read.body.lines).toHaveLength(1);
    await a.user.delete(`/api/stocktakes/${st.id}/counts/999999`).expect(404);
  });

  it('refuses an undo that would take a count below zero', async () => {
    const { items } = await stockedCategory([3]);
    const st = await create({ scope: { itemIds: [items[0].id] } });
    const up = (await count(a.user, st.id, { code: items[0].sku, quantity: 10, mode: 'set' }).expect(200)).body.count
      .id;
    await count(a.user, st.id, { code: items[0].sku, quantity: 2, mode: 'set' }).expect(200);
    const res = await a.user.delete(`/api/stocktakes/${st.id}/counts/${up}`).expect(409);
    expect(res.body.message).toBe(
      `Undoing this count would leave the count of ${items[0].sku} below zero: undo the later counts first`,
    );
  });
});

describe("a counter's own last scans", () => {
  it('lists mine however many scans another person took after them; the API lists everyone', async () => {
    const { items } = await stockedCategory([4, 6]);
    const other = await buildUser(t.db);
    const st = await create({ scope: { itemIds: items.map((i) => i.id) } });
    const mine = [];
    for (const item of items) mine.push((await count(a.user, st.id, { code: item.sku, quantity: 1 }).expect(200)).body);
    // another person's 250 scans after mine
    await t.db('stocktake_counts').insert(
      Array.from({ length: 250 }, (_, n) => ({
        stocktake_id: st.id,
        item_id: items[n % 2].id,
        mode: 'add',
        quantity: 1,
        previous_counted: 1,
        new_counted: 1,
        previous_expected: 4,
        new_expected: 4,
        counted_by: other.id,
      })),
    );
    const service = stocktakesService(t.db);
    const own = await service.counts(st.id, { limit: 20, countedBy: a.ids.user });
    expect(own.map((c) => Number(c.id))).toEqual([mine[1].count.id, mine[0].count.id]);
    expect(own.map((c) => c.sku)).toEqual([items[1].sku, items[0].sku]);
    expect(await service.counts(st.id, { limit: 20, countedBy: a.ids.manager })).toEqual([]);

    const page = await a.user.get(`/stocktakes/${st.id}/count`).expect(200);
    for (const scan of mine) expect(page.text).toContain(`id="count-${scan.count.id}"`);

    const all = await a.user.get(`/api/stocktakes/${st.id}/counts?limit=500`).expect(200);
    expect(all.body.counts).toHaveLength(252);
    expect(all.body.counts[0].countedBy.id).toBe(other.id);
  });
});

describe('changing the quantity of a scan', () => {
  const OWN_SCANS = { anyonesScans: false };
  const actor = (userId: string) => ({
    kind: 'session' as const,
    userId,
    email: 'x@example.ac.uk',
    mcpKeyId: null,
    ip: null,
  });
  /** Everything a change could touch: the lines and the count log. */
  const stateOf = async (id: number) => ({
    lines: await t.db('stocktake_lines').where({ stocktake_id: id }).orderBy('id'),
    counts: await t.db('stocktake_counts').where({ stocktake_id: id }).orderBy('id'),
  });
  const refusal = async (work: Promise<unknown>) => {
    const err = (await work.then(
      () => null,
      (e: unknown) => e,
    )) as { status: number; message: string } | null;
    return err && { status: err.status, message: err.message };
  };

  it('undoes the scan and counts the quantity in its place, in one step', async () => {
    const { items } = await stockedCategory([8]);
    const st = await create({ scope: { itemIds: [items[0].id] } });
    const c1 = (await count(a.user, st.id, { code: items[0].sku, quantity: 1 }).expect(200)).body.count.id;
    const c2 = (await count(a.manager, st.id, { code: items[0].sku, quantity: 2 }).expect(200)).body.count.id;
    const service = stocktakesService(t.db);

    const changed = await service.changeCount(st.id, { countId: c1, quantity: '24' }, actor(a.ids.user), OWN_SCANS);
    expect(changed.line).toMatchObject({ counted: '26.00', expected: '8.00', counted_by: a.ids.user });
    expect(changed.undone).toMatchObject({ quantity: '1.00' });
    expect(Number(changed.undone!.id)).toBe(c1);
    expect(changed.undone!.undone_at).not.toBeNull();
    expect(changed.count).toMatchObject({
      mode: 'add',
      quantity: '24.00',
      previous_counted: '2.00',
      new_counted: '26.00',
    });
    const { lines, counts } = await stateOf(st.id);
    expect(lines).toMatchObject([{ counted: '26.00', expected: '8.00' }]);
    expect(counts.map((c) => [Number(c.id), c.quantity, c.undone_at !== null, c.counted_by])).toEqual([
      [c1, '1.00', true, a.ids.user],
      [c2, '2.00', false, a.ids.manager],
      [Number(changed.count!.id), '24.00', false, a.ids.user],
    ]);

    // the same quantity changes nothing; 0 only undoes the scan
    const same = await service.changeCount(st.id, { countId: c2, quantity: '2' }, actor(a.ids.manager), {
      anyonesScans: true,
    });
    expect(same.undone).toBeNull();
    expect(await stateOf(st.id)).toEqual({ lines, counts });
    const zero = await service.changeCount(st.id, { countId: c2, quantity: 0 }, actor(a.ids.manager), {
      anyonesScans: true,
    });
    expect(zero.count).toBeNull();
    expect(zero.line).toMatchObject({ counted: '24.00' });
    expect((await stateOf(st.id)).counts).toHaveLength(3);
  });

  it('refuses as an undo does, leaving the lines and the count log as they were', async () => {
    const { items } = await stockedCategory([3, 4]);
    const st = await create({ scope: { itemIds: [items[0].id] } });
    const other = await create({ scope: { itemIds: [items[1].id] } });
    const c1 = (await count(a.user, st.id, { code: items[0].sku, quantity: 5 }).expect(200)).body.count.id;
    const set = (await count(a.user, st.id, { code: items[0].sku, quantity: 2, mode: 'set' }).expect(200)).body.count
      .id;
    const elsewhere = (await count(a.user, other.id, { code: items[1].sku, quantity: 1 }).expect(200)).body.count.id;
    const service = stocktakesService(t.db);
    const me = actor(a.ids.user);
    const before = await stateOf(st.id);

    // undoing the 5 would take the set's 2 below zero
    expect(await refusal(service.changeCount(st.id, { countId: c1, quantity: '1' }, me, OWN_SCANS))).toEqual({
      status: 409,
      message: `Undoing this count would leave the count of ${items[0].sku} below zero: undo the later counts first`,
    });
    expect(await refusal(service.changeCount(st.id, { countId: set, quantity: '1' }, me, OWN_SCANS))).toMatchObject({
      status: 409,
    });
    expect(await refusal(service.changeCount(st.id, { countId: elsewhere, quantity: '3' }, me, OWN_SCANS))).toEqual({
      status: 404,
      message: 'Count not found',
    });
    expect(await stateOf(st.id)).toEqual(before);

    await a.user.delete(`/api/stocktakes/${other.id}/counts/${elsewhere}`).expect(200);
    const otherBefore = await stateOf(other.id);
    expect(await refusal(service.changeCount(other.id, { countId: elsewhere, quantity: '3' }, me, OWN_SCANS))).toEqual({
      status: 409,
      message: `Count ${elsewhere} is already undone`,
    });
    await a.manager.delete(`/api/stocktakes/${st.id}`).expect(200);
    const cancelled = await refusal(service.changeCount(st.id, { countId: set, quantity: '1' }, me, OWN_SCANS));
    expect(cancelled).toMatchObject({ status: 409, message: expect.stringMatching(/is cancelled/) });
    expect(await stateOf(st.id)).toEqual(before);
    expect(await stateOf(other.id)).toEqual(otherBefore);
  });
});

describe('PATCH /api/stocktakes/{id}/counts/{countId}', () => {
  it("changes a scan's quantity for the person who scanned it or a manager", async () => {
    const { items } = await stockedCategory([6]);
    const st = await create({ scope: { itemIds: [items[0].id] } });
    const mine = (await count(a.user, st.id, { code: items[0].sku, quantity: 1 }).expect(200)).body.count.id;
    const theirs = (await count(a.manager, st.id, { code: items[0].sku, quantity: 1 }).expect(200)).body.count.id;
    const path = (countId: number) => `/api/stocktakes/${st.id}/counts/${countId}`;

    const changed = await a.user.patch(path(mine)).send({ quantity: 24 }).expect(200);
    expect(changed.body).toMatchObject({
      line: { itemId: items[0].id, counted: 25, expected: 6, countedBy: { id: a.ids.user } },
      count: { mode: 'add', quantity: 24, previousCounted: 1, counted: 25, undoneAt: null },
    });
    const forbidden = await a.user.patch(path(theirs)).send({ quantity: 2 }).expect(403);
    expect(forbidden.body.message).toBe('Only the person who scanned it or a manager can change a scan');
    await a.manager.patch(path(changed.body.count.id)).send({ quantity: 0 }).expect(200);
    const bad = await a.user.patch(path(theirs)).send({ quantity: -1 }).expect(400);
    expect(bad.body.errors[0].field).toBe('quantity');
    await a.user.patch(path(mine)).send({ quantity: 3 }).expect(409);
    await a.user.patch(path(999999)).send({ quantity: 3 }).expect(404);
    const counts = await t.db('stocktake_counts').where({ stocktake_id: st.id }).orderBy('id');
    expect(counts.map((c) => [c.quantity, c.undone_at !== null])).toEqual([
      ['1.00', true],
      ['1.00', false],
      ['24.00', true],
    ]);
    expect(await t.db('stocktake_lines').where({ stocktake_id: st.id }).first()).toMatchObject({ counted: '1.00' });
  });
});

describe('the review read: totals and a page of lines sorted in SQL', () => {
  it('sorts by variance value (gain or loss) first, uncounted last, filters and pages; totals as get() sums them', async () => {
    const category = await buildCategory(t.db);
    const item = (name: string, price: string) => buildStockedItem(t.db, 10, { categoryId: category.id, name, price });
    const [loss, gain, exact, later, uncounted] = [
      await item('Zinc loss', '1.00'),
      await item('Yarn gain', '5.00'),
      await item('Exact', '2.00'),
      await item('B uncounted', '9.00'),
      await item('A uncounted', '9.00'),
    ];
    const st = await create({ scope: { categoryIds: [category.id] } });
    await count(a.user, st.id, { code: loss.sku, quantity: 7 }).expect(200);
    await count(a.user, st.id, { code: gain.sku, quantity: 11 }).expect(200);
    await count(a.user, st.id, { code: exact.sku, quantity: 10 }).expect(200);
    const service = stocktakesService(t.db);
    const ids = async (filter: 'all' | 'counted' | 'uncounted' | 'variance', page = 1, limit = 10) => {
      const { rows, total } = await service.lines(st.id, { page, limit, filter });
      return { items: rows.map((r) => r.item_id), total };
    };

    expect(await ids('all')).toEqual({ items: [gain.id, loss.id, exact.id, uncounted.id, later.id], total: 5 });
    expect(await ids('variance')).toEqual({ items: [gain.id, loss.id], total: 2 });
    expect(await ids('counted')).toEqual({ items: [gain.id, loss.id, exact.id], total: 3 });
    expect(await ids('uncounted')).toEqual({ items: [uncounted.id, later.id], total: 2 });
    expect(await ids('all', 2, 2)).toEqual({ items: [exact.id, uncounted.id], total: 5 });
    expect(await ids('all', 4, 2)).toEqual({ items: [], total: 5 });
    const [first] = (await service.lines(st.id, { page: 1, limit: 1, filter: 'all' })).rows;
    expect(first).toMatchObject({ sku: gain.sku, expected: '10.00', counted: '11.00', unit_price: '5.00' });

    const summary = await service.summary(st.id);
    expect(summary.totals).toEqual({
      linesTotal: 5,
      linesCounted: 3,
      linesFound: 0,
      itemsWithVariance: 2,
      varianceValue: '2.00',
    });
    expect(summary.totals).toEqual((await service.get(st.id)).totals);
    expect(summary.stocktake).toMatchObject({ id: st.id, reference: st.reference });
    await expect(service.lines(999999, { page: 1, limit: 10, filter: 'all' })).rejects.toMatchObject({ status: 404 });
    await expect(service.summary(999999)).rejects.toMatchObject({ status: 404 });

    // the review page shows that page, and the post confirmation those totals
    const review = (await a.manager.get(`/stocktakes/${st.id}?show=variance`).expect(200)).text;
    expect(review.indexOf(`id="line-${gain.id}"`)).toBeGreaterThan(-1);
    expect(review.indexOf(`id="line-${gain.id}"`)).toBeLessThan(review.indexOf(`id="line-${loss.id}"`));
    expect(review).not.toContain(`id="line-${exact.id}"`);
    expect(review).toContain('2 lines');
    const confirm = (await a.manager.get(`/stocktakes/${st.id}/post`).expect(200)).text;
    expect(confirm).toContain('3 of 5');
    expect(confirm).toContain('2 lines were not counted');
    await a.manager.get(`/stocktakes/${st.id}?show=toString`).expect(200);

    // posted: the prices are fixed, and the totals still agree
    await a.manager.post(`/api/stocktakes/${st.id}/post`).send({}).expect(200);
    await t.db('items').where({ id: gain.id }).update({ price: '50.00' });
    const posted = await service.summary(st.id);
    expect(posted.totals).toEqual((await service.get(st.id)).totals);
    expect(posted.totals.varianceValue).toBe('2.00');
  });
});

describe('blind stocktakes', () => {
  it('never send expected, variance or their value to a user, but do to a manager', async () => {
    const { items } = await stockedCategory([9]);
    const st = await create({ scope: { itemIds: [items[0].id] }, blind: true });
    const counted = await count(a.user, st.id, { code: items[0].sku, quantity: 4 }).expect(200);
    expect(counted.body).toMatchObject({ counted: 4, expected: null, variance: null, varianceValue: null });
    expect(counted.text).not.toContain('"expected":9');

    const asUser = await a.user.get(`/api/stocktakes/${st.id}`).expect(200);
    expect(asUser.body.blind).toBe(true);
    expect(asUser.body.totals).toMatchObject({ itemsWithVariance: null, varianceValue: null });
    expect(asUser.body.lines[0]).toMatchObject({
      expected: null,
      variance: null,
      varianceValue: null,
      unitPrice: null,
    });
    const csv = await a.user.get(`/api/stocktakes/${st.id}/report?format=csv`).expect(200);
    expect(csv.text).not.toMatch(/,9,/);

    const asManager = await a.manager.get(`/api/stocktakes/${st.id}`).expect(200);
    expect(asManager.body.lines[0]).toMatchObject({ expected: 9, counted: 4, variance: -5, varianceValue: '-12.50' });
  });
});

describe('POST /api/stocktakes/{id}/post', () => {
  it('applies each variance as one adjustment, keeping a sale made between count and post', async () => {
    const { items } = await stockedCategory([10, 5, 3]);
    const [sold, exact, unseen] = items;
    const st = await create({ scope: { itemIds: items.map((i) => i.id) } });
    await count(a.user, st.id, { code: sold.sku, quantity: 8 }).expect(200);
    await count(a.user, st.id, { code: exact.sku, quantity: 5 }).expect(200);
    // a sale of 2 after the count
    await a.user
      .post('/api/sales')
      .send({ chargeCode, items: [{ itemId: sold.id, quantity: 2 }], vatApplied: false })
      .expect(201);
    expect(await stockOf(t.db, sold.id)).toBe('8.00');

    const res = await a.manager.post(`/api/stocktakes/${st.id}/post`).send({}).expect(200);
    expect(res.body).toEqual({
      reference: st.reference,
      itemsCounted: 2,
      itemsAdjusted: 1,
      varianceValue: '-5.00',
      movements: 1,
    });
    // counted 8 - sold 2
    expect(await stockOf(t.db, sold.id)).toBe('6.00');
    expect(await stockOf(t.db, exact.id)).toBe('5.00');
    expect(await stockOf(t.db, unseen.id)).toBe('3.00');
    const movements = await movementsOf(t.db, sold.id);
    expect(movements.at(-1)).toMatchObject({
      type: 'adjustment',
      quantity: '-2.00',
      previous_stock: '8.00',
      new_stock: '6.00',
      reason: `Stocktake ${st.reference}`,
      reference_type: 'stocktake',
      reference_id: st.reference,
      performed_by: a.ids.manager,
    });
    expect(await movementsOf(t.db, exact.id)).toHaveLength(1);
    expect(await ledgerMismatches(t.db)).toEqual({ count: 0, skus: null });

    const read = await a.manager.get(`/api/stocktakes/${st.id}`).expect(200);
    expect(read.body).toMatchObject({ status: 'posted', uncounted: 'ignore', postedBy: { id: a.ids.manager } });
    const audit = await t.db('audit_log').where({ entity_type: 'stocktake', entity_id: st.reference, action: 'post' });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_user_id: a.ids.manager, after: { status: 'posted', itemsAdjusted: 1 } });

    // lastCountedAt on the counted items only
    const item = await a.user.get(`/api/items/${sold.id}`).expect(200);
    expect(item.body.lastCountedAt).toEqual(expect.any(String));
    const notCounted = await a.user.get(`/api/items/${unseen.id}`).expect(200);
    expect(notCounted.body.lastCountedAt).toBeNull();
  });

  it('a recount (set) after a sale takes the stock again, so the sale is neither undone nor counted twice', async () => {
    const { items } = await stockedCategory([10]);
    const st = await create({ scope: { itemIds: [items[0].id] } });
    await count(a.user, st.id, { code: items[0].sku, quantity: 8 }).expect(200);
    await a.user
      .post('/api/sales')
      .send({ chargeCode, items: [{ itemId: items[0].id, quantity: 2 }], vatApplied: false })
      .expect(201);
    // the shelf now holds 8 - 2 = 6; a recount says 5
    const recount = await count(a.manager, st.id, { code: items[0].sku, quantity: 5, mode: 'set' }).expect(200);
    expect(recount.body).toMatchObject({ expected: 8, counted: 5, variance: -3 });
    // undoing the recount restores the first count and its expected
    const undone = await a.manager.delete(`/api/stocktakes/${st.id}/counts/${recount.body.count.id}`).expect(200);
    expect(undone.body.line).toMatchObject({ expected: 10, counted: 8, variance: -2 });
    await count(a.manager, st.id, { code: items[0].sku, quantity: 5, mode: 'set' }).expect(200);
    await a.manager.post(`/api/stocktakes/${st.id}/post`).send({}).expect(200);
    expect(await stockOf(t.db, items[0].id)).toBe('5.00');
    expect(await ledgerMismatches(t.db)).toEqual({ count: 0, skus: null });
  });

  it('a count taken after a sale has the sale in its expected', async () => {
    const { items } = await stockedCategory([10]);
    const st = await create({ scope: { itemIds: [items[0].id] } });
    await a.user
      .post('/api/sales')
      .send({ chargeCode, items: [{ itemId: items[0].id, quantity: 3 }], vatApplied: false })
      .expect(201);
    const counted = await count(a.user, st.id, { code: items[0].sku, quantity: 7 }).expect(200);
    expect(counted.body).toMatchObject({ expected: 7, variance: 0 });
    const res = await a.manager.post(`/api/stocktakes/${st.id}/post`).send({}).expect(200);
    expect(res.body).toMatchObject({ itemsCounted: 1, itemsAdjusted: 0, movements: 0, varianceValue: '0.00' });
    expect(await stockOf(t.db, items[0].id)).toBe('7.00');
  });

  it('posts once: a repeated or concurrent post is 409 and writes nothing more', async () => {
    const { items } = await stockedCategory([4]);
    const st = await create({ scope: { itemIds: [items[0].id] } });
    await count(a.user, st.id, { code: items[0].sku, quantity: 1 }).expect(200);
    const results = await Promise.all([
      a.manager.post(`/api/stocktakes/${st.id}/post`).send({}),
      a.admin.post(`/api/stocktakes/${st.id}/post`).send({}),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const again = await a.manager.post(`/api/stocktakes/${st.id}/post`).expect(409);
    expect(again.body.message).toBe(`Stocktake ${st.reference} is already posted`);
    expect(await stockOf(t.db, items[0].id)).toBe('1.00');
    expect(await movementsOf(t.db, items[0].id)).toHaveLength(2);
    expect(
      await t.db('audit_log').where({ entity_type: 'stocktake', entity_id: st.reference, action: 'post' }),
    ).toHaveLength(1);
    const late = await count(a.user, st.id, { code: items[0].sku, quantity: 1 }).expect(409);
    expect(late.body.message).toBe(`Stocktake ${st.reference} is posted: counts can no longer change`);
    const cancel = await a.manager.delete(`/api/stocktakes/${st.id}`).expect(409);
    expect(cancel.body.message).toBe(`Stocktake ${st.reference} is posted: it cannot be cancelled`);
  });

  it('a count racing the posting is either posted with it or refused 409, never lost', async () => {
    for (let round = 0; round < 5; round++) {
      const { items } = await stockedCategory([10]);
      const st = await create({ scope: { itemIds: [items[0].id] } });
      await count(a.user, st.id, { code: items[0].sku, quantity: 5 }).expect(200);
      const [late, posted] = await Promise.all([
        count(a.user, st.id, { code: items[0].sku, quantity: 1 }),
        a.manager.post(`/api/stocktakes/${st.id}/post`).send({}),
      ]);
      expect(posted.status).toBe(200);
      expect([200, 409]).toContain(late.status);
      expect(await stockOf(t.db, items[0].id)).toBe(late.status === 200 ? '6.00' : '5.00');
    }
    expect(await ledgerMismatches(t.db)).toEqual({ count: 0, skus: null });
  });

  it('zero counts the uncounted lines against the stock at posting; ignore leaves them', async () => {
    const { items } = await stockedCategory([6, 2]);
    const st = await create({ scope: { itemIds: items.map((i) => i.id) } });
    await count(a.user, st.id, { code: items[0].sku, quantity: 6 }).expect(200);
    const res = await a.manager.post(`/api/stocktakes/${st.id}/post`).send({ uncounted: 'zero' }).expect(200);
    expect(res.body).toMatchObject({ itemsCounted: 2, itemsAdjusted: 1, varianceValue: '-5.00', movements: 1 });
    expect(await stockOf(t.db, items[1].id)).toBe('0.00');
    const read = await a.manager.get(`/api/stocktakes/${st.id}`).expect(200);
    const zeroed = read.body.lines.find((l: { itemId: number }) => l.itemId === items[1].id);
    expect(zeroed).toMatchObject({ expected: 2, counted: 0, variance: -2, varianceValue: '-5.00' });
    // zeroed, not counted by anyone: not marked counted
    expect((await a.user.get(`/api/items/${items[1].id}`)).body.lastCountedAt).toBeNull();
    await a.manager.post(`/api/stocktakes/${st.id}/post`).send({ uncounted: 'bogus' }).expect(400);
  });

  it('refuses a post that would take stock below zero, naming the item', async () => {
    const { items } = await stockedCategory([5]);
    const st = await create({ scope: { itemIds: [items[0].id] } });
    await count(a.user, st.id, { code: items[0].sku, quantity: 1 }).expect(200);
    await a.user
      .post('/api/sales')
      .send({ chargeCode, items: [{ itemId: items[0].id, quantity: 3 }], vatApplied: false })
      .expect(201);
    const res = await a.manager.post(`/api/stocktakes/${st.id}/post`).send({}).expect(409);
    expect(res.body.message).toBe(
      `Stocktake line ${items[0].sku} would leave stock below zero: counted 1, expected 5, stock now 2; recount it`,
    );
    expect(await stockOf(t.db, items[0].id)).toBe('2.00');
    const read = await a.manager.get(`/api/stocktakes/${st.id}`).expect(200);
    expect(read.body.status).toBe('open');
  });

  it('is for managers, 404 for an unknown stocktake', async () => {
    const { items } = await stockedCategory([1]);
    const st = await create({ scope: { itemIds: [items[0].id] } });
    await a.user.post(`/api/stocktakes/${st.id}/post`).send({}).expect(403);
    await a.manager.post('/api/stocktakes/999999/post').send({}).expect(404);
  });
});

describe('DELETE /api/stocktakes/{id}', () => {
  it('cancels an open stocktake once, audited; counts and posting are then 409', async () => {
    const { items } = await stockedCategory([3]);
    const st = await create({ scope: { itemIds: [items[0].id] } });
    await count(a.user, st.id, { code: items[0].sku, quantity: 1 }).expect(200);
    await a.user.delete(`/api/stocktakes/${st.id}`).expect(403);
    const res = await a.manager.delete(`/api/stocktakes/${st.id}`).expect(200);
    expect(res.body).toMatchObject({ status: 'cancelled', cancelledBy: { id: a.ids.manager } });
    const twice = await a.manager.delete(`/api/stocktakes/${st.id}`).expect(409);
    expect(twice.body.message).toBe(`Stocktake ${st.reference} is already cancelled`);
    const counted = await count(a.user, st.id, { code: items[0].sku, quantity: 1 }).expect(409);
    expect(counted.body.message).toBe(`Stocktake ${st.reference} is cancelled: counts can no longer change`);
    const posted = await a.manager.post(`/api/stocktakes/${st.id}/post`).send({}).expect(409);
    expect(posted.body.message).toBe(`Stocktake ${st.reference} is cancelled: it cannot be posted`);
    expect(await stockOf(t.db, items[0].id)).toBe('3.00');
    const audit = await t
      .db('audit_log')
      .where({ entity_type: 'stocktake', entity_id: st.reference, action: 'cancel' });
    expect(audit).toHaveLength(1);
    await a.manager.delete('/api/stocktakes/999999').expect(404);
  });
});

describe('GET /api/stocktakes', () => {
  it('lists newest first, paged, filtered by status', async () => {
    const { items } = await stockedCategory([1]);
    const older = await create({ scope: { itemIds: [items[0].id] } });
    const newer = await create({ scope: { itemIds: [items[0].id] } });
    const res = await a.user.get('/api/stocktakes?limit=2').expect(200);
    expect(res.body.stocktakes.map((s: { id: number }) => s.id)).toEqual([newer.id, older.id]);
    expect(res.body.stocktakes[0]).toMatchObject({ linesTotal: 1, linesCounted: 0, status: 'open' });
    expect(res.body.pagination).toMatchObject({ page: 1, limit: 2 });
    expect(res.body.pagination.total).toBeGreaterThanOrEqual(2);
    const page2 = await a.user.get('/api/stocktakes?limit=1&page=2').expect(200);
    expect(page2.body.stocktakes[0].id).toBe(older.id);
    const cancelled = await a.user.get('/api/stocktakes?status=cancelled').expect(200);
    expect(cancelled.body.stocktakes.every((s: { status: string }) => s.status === 'cancelled')).toBe(true);
    await a.user.get('/api/stocktakes?limit=0').expect(400);
  });
});

describe('report', () => {
  it('downloads the lines as CSV for the auditors', async () => {
    const { items } = await stockedCategory([4], '3.00');
    const st = await create({ scope: { itemIds: [items[0].id] } });
    await count(a.user, st.id, { code: items[0].sku, quantity: 5 }).expect(200);
    const res = await a.manager.get(`/api/stocktakes/${st.id}/report?format=csv`).expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="stocktake-${st.reference}.csv"`);
    const [header, row] = res.text
      .replace(/^\uFEFF/, '')
      .trim()
      .split('\n');
    expect(header).toBe(
      'Reference,SKU,Name,Found,Expected,Counted,Variance,Unit Price,Variance Value,Counted By,Counted At,Lot,Lot Expires On',
    );
    expect(row).toMatch(
      new RegExp(`^${st.reference},${items[0].sku},${items[0].name},no,4,5,1,3.00,3.00,Test User,\\d{4}-`),
    );
    const json = await a.manager.get(`/api/stocktakes/${st.id}/report`).expect(200);
    expect(json.body.lines[0]).toMatchObject({ expected: 4, counted: 5, varianceValue: '3.00' });
  });
});

describe('GET /api/stocktakes/suggestions', () => {
  it('lists active items not counted for days, highest stock value first', async () => {
    const { items } = await stockedCategory([1]);
    const st = await create({ scope: { itemIds: [items[0].id] } });
    await count(a.user, st.id, { code: items[0].sku, quantity: 1 }).expect(200);
    await a.manager.post(`/api/stocktakes/${st.id}/post`).send({}).expect(200);
    const valuable = await buildStockedItem(t.db, 1000, { price: '99.00' });
    const res = await a.user.get('/api/stocktakes/suggestions?days=90&limit=1000').expect(200);
    const ids = res.body.items.map((i: { itemId: number }) => i.itemId);
    expect(ids).not.toContain(items[0].id);
    expect(res.body.items[0]).toMatchObject({ itemId: valuable.id, stockValue: '99000.00', lastCountedAt: null });
    const values = res.body.items.map((i: { stockValue: string }) => Number(i.stockValue));
    expect(values).toEqual([...values].sort((x, y) => y - x));
    await a.user.get('/api/stocktakes/suggestions?days=0').expect(400);
  });
});

describe('GET /api/dashboard/stock-counts', () => {
  it('gives the accuracy of the lines posted in 90 days and the items overdue for a count', async () => {
    const own = await testApp();
    try {
      const manager = await own.loginAs(await buildUser(own.db, { role: 'manager' }));
      const empty = await manager.get('/api/dashboard/stock-counts').expect(200);
      expect(empty.body).toEqual({ days: 90, linesCounted: 0, linesExact: 0, stockAccuracy: null, itemsOverdue: 0 });

      const items = [];
      for (const stock of [5, 5, 5, 5]) items.push(await buildStockedItem(own.db, stock));
      await buildItem(own.db, { isActive: false });
      const st = (
        await manager
          .post('/api/stocktakes')
          .send({ scope: { itemIds: items.map((i) => i.id) } })
          .expect(201)
      ).body;
      for (const [i, quantity] of [5, 5, 4].entries()) {
        await manager.post(`/api/stocktakes/${st.id}/counts`).send({ itemId: items[i].id, quantity }).expect(200);
      }
      // an open stocktake's counts are not yet figures
      expect((await manager.get('/api/dashboard/stock-counts').expect(200)).body.linesCounted).toBe(0);
      await manager.post(`/api/stocktakes/${st.id}/post`).send({ uncounted: 'zero' }).expect(200);
      const res = await manager.get('/api/dashboard/stock-counts').expect(200);
      // 2 of the 3 lines counted matched; the zeroed line was not counted, so its item is still due
      expect(res.body).toEqual({ days: 90, linesCounted: 3, linesExact: 2, stockAccuracy: 66.7, itemsOverdue: 1 });
      await own
        .db('items')
        .where({ id: items[0].id })
        .update({ last_counted_at: own.db.raw("now() - interval '91 days'") });
      expect((await manager.get('/api/dashboard/stock-counts').expect(200)).body.itemsOverdue).toBe(2);
    } finally {
      await own.close();
    }
  });
});
