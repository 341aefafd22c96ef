import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noteRecordExists } from '../src/modules/notes/notes.references';
import { runSeeds } from '../src/db/seed';
import { testApp, type TestApp } from './helpers/app';
import { buildItem, buildUser } from './helpers/factories';
import { buildItemSource, buildOrder, buildSupplier } from './helpers/purchasing-factories';

let t: TestApp;
let user: supertest.Agent;
let admin: supertest.Agent;
let adminId: string;
beforeAll(async () => {
  t = await testApp();
  user = await t.loginAs(await buildUser(t.db, { role: 'user' }));
  const adminRow = await buildUser(t.db, { role: 'admin' });
  adminId = adminRow.id;
  admin = await t.loginAs(adminRow);
});
afterAll(() => t.close());

describe('POST /api/suppliers', () => {
  it('401 without a session', () => t.request.post('/api/suppliers').send({ id: 'x', name: 'X' }).expect(401));

  it('201 creates a supplier with its client-supplied id (any signed-in user, as the spec says)', async () => {
    const res = await user
      .post('/api/suppliers')
      .send({
        id: 'fisher-uk',
        name: 'Fisher UK',
        contact: 'Sam',
        email: 'orders@fisher.example',
        phone: '0123',
        address: 'Loughborough',
      })
      .expect(201);
    expect(res.body).toEqual({
      id: 'fisher-uk',
      name: 'Fisher UK',
      contact: 'Sam',
      email: 'orders@fisher.example',
      phone: '0123',
      address: 'Loughborough',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(await t.db('suppliers').where({ id: 'fisher-uk' }).first()).toMatchObject({ name: 'Fisher UK' });
  });

  it('400 names each invalid field: empty/unsafe/long id, bad email, missing name', async () => {
    for (const id of ['', 'has space', 'a/b', 'x'.repeat(65)]) {
      const res = await user.post('/api/suppliers').send({ id, name: 'N' }).expect(400);
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field: 'id' }));
    }
    const res = await user.post('/api/suppliers').send({ id: 'ok-id', email: 'not-an-email' }).expect(400);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['email', 'name']);
    expect(await t.db('suppliers').where({ id: 'ok-id' }).first()).toBeUndefined();
  });

  it('409 when the id is taken', async () => {
    await buildSupplier(t.db, { id: 'taken' });
    const res = await user.post('/api/suppliers').send({ id: 'taken', name: 'Other' }).expect(409);
    expect(res.body.message).toBe("Supplier id 'taken' is already taken");
  });
});

describe('GET /api/suppliers', () => {
  it('200 lists suppliers by name', async () => {
    await buildSupplier(t.db, { id: 'zz-last', name: 'zzz Last' });
    await buildSupplier(t.db, { id: 'aa-first', name: 'AAA First' });
    const res = await user.get('/api/suppliers').expect(200);
    const ids = res.body.map((s: { id: string }) => s.id);
    expect(ids.indexOf('aa-first')).toBeLessThan(ids.indexOf('zz-last'));
    expect(res.body[0]).toEqual(
      expect.objectContaining({ id: expect.any(String), name: expect.any(String), email: expect.anything() }),
    );
  });

  it('401 without a session', () => t.request.get('/api/suppliers').expect(401));
});

describe('GET /api/suppliers/:id', () => {
  it('200 with its item links', async () => {
    const supplier = await buildSupplier(t.db);
    const item = await buildItem(t.db, { name: 'Beaker' });
    const source = await buildItemSource(t.db, supplier.id, item.id, '3.10');
    const res = await user.get(`/api/suppliers/${supplier.id}`).expect(200);
    expect(res.body).toMatchObject({ id: supplier.id, name: supplier.name });
    expect(res.body.items).toEqual([
      {
        id: source.id,
        supplierId: supplier.id,
        itemId: item.id,
        price: '3.10',
        notes: null,
        supplierSku: null,
        preferred: false,
        createdAt: expect.any(String),
        item: { id: item.id, name: 'Beaker', sku: item.sku, isActive: true },
      },
    ]);
  });

  it('404 for an unknown supplier', async () => {
    expect((await user.get('/api/suppliers/nope').expect(404)).body.message).toBe('Supplier not found');
  });
});

describe('PUT /api/suppliers/:id', () => {
  it('200 updates the given fields only', async () => {
    const supplier = await buildSupplier(t.db, { name: 'Old', phone: '111' });
    const res = await user.put(`/api/suppliers/${supplier.id}`).send({ name: 'New', email: '' }).expect(200);
    expect(res.body).toMatchObject({ id: supplier.id, name: 'New', phone: '111', email: null });
  });

  it('400 for an empty body or a bad email, 404 for an unknown supplier', async () => {
    const supplier = await buildSupplier(t.db);
    await user.put(`/api/suppliers/${supplier.id}`).send({}).expect(400);
    await user.put(`/api/suppliers/${supplier.id}`).send({ email: 'x@' }).expect(400);
    await user.put('/api/suppliers/unknown').send({ name: 'X' }).expect(404);
  });
});

describe('POST /api/suppliers/:id/items', () => {
  it('201 links an item with a price and notes', async () => {
    const supplier = await buildSupplier(t.db);
    const item = await buildItem(t.db);
    const res = await user
      .post(`/api/suppliers/${supplier.id}/items`)
      .send({ itemId: item.id, price: '4.5', notes: 'case of 10' })
      .expect(201);
    expect(res.body).toMatchObject({
      supplierId: supplier.id,
      itemId: item.id,
      price: '4.50',
      notes: 'case of 10',
      item: { id: item.id },
    });
    const row = await t.db('item_sources').where({ id: res.body.id }).first();
    expect(row).toMatchObject({ supplier_id: supplier.id, item_id: item.id, price: '4.50' });
  });

  it('404 for an unknown supplier or item, 409 for a duplicate link, 400 for a bad price', async () => {
    const supplier = await buildSupplier(t.db);
    const item = await buildItem(t.db, { name: 'Flask' });
    expect(
      (await user.post('/api/suppliers/ghost/items').send({ itemId: item.id, price: '1' }).expect(404)).body.message,
    ).toBe('Supplier not found');
    expect(
      (await user.post(`/api/suppliers/${supplier.id}/items`).send({ itemId: 999999, price: '1' }).expect(404)).body
        .message,
    ).toBe('Item not found');
    await user.post(`/api/suppliers/${supplier.id}/items`).send({ itemId: item.id, price: '-1' }).expect(400);
    await user.post(`/api/suppliers/${supplier.id}/items`).send({ itemId: item.id, price: '1.00' }).expect(201);
    const res = await user
      .post(`/api/suppliers/${supplier.id}/items`)
      .send({ itemId: item.id, price: '2.00' })
      .expect(409);
    expect(res.body.message).toBe(`Item 'Flask' is already linked to supplier '${supplier.id}'`);
    expect(await t.db('item_sources').where({ supplier_id: supplier.id })).toHaveLength(1);
  });
});

describe('DELETE /api/sources/:id', () => {
  it('403 for a non-admin, 204 for an admin, then 404', async () => {
    const supplier = await buildSupplier(t.db);
    const source = await buildItemSource(t.db, supplier.id, (await buildItem(t.db)).id);
    await user.delete(`/api/sources/${source.id}`).expect(403);
    await admin.delete(`/api/sources/${source.id}`).expect(204);
    expect(await t.db('item_sources').where({ id: source.id }).first()).toBeUndefined();
    await admin.delete(`/api/sources/${source.id}`).expect(404);
    await admin.delete('/api/sources/abc').expect(400);
  });
});

describe('DELETE /api/suppliers/:id', () => {
  it('403 for a manager', async () => {
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    const supplier = await buildSupplier(t.db);
    await manager.delete(`/api/suppliers/${supplier.id}`).expect(403);
  });

  it('409 while orders reference it; nothing is removed', async () => {
    const supplier = await buildSupplier(t.db, { name: 'Busy Supplier' });
    await buildOrder(t.db, supplier.id, [{ name: 'Thing', quantity: '1', unitCost: '1.00' }]);
    const res = await admin.delete(`/api/suppliers/${supplier.id}`).expect(409);
    expect(res.body).toEqual({
      message: "Cannot delete supplier 'Busy Supplier'",
      reasons: ['orders: 1 record(s) reference it (supplier_id)'],
    });
    expect(await t.db('suppliers').where({ id: supplier.id }).first()).toBeDefined();
  });

  it('204 removes the supplier with its item links and vendor notes', async () => {
    const supplier = await buildSupplier(t.db);
    const item = await buildItem(t.db);
    await buildItemSource(t.db, supplier.id, item.id);
    await t
      .db('notes')
      .insert({ text: 'slow', reference_type: 'vendor', reference_id: supplier.id, created_by: adminId });
    await admin.delete(`/api/suppliers/${supplier.id}`).expect(204);
    expect(await t.db('suppliers').where({ id: supplier.id }).first()).toBeUndefined();
    expect(await t.db('item_sources').where({ supplier_id: supplier.id })).toHaveLength(0);
    expect(await t.db('notes').where({ reference_type: 'vendor', reference_id: supplier.id })).toHaveLength(0);
    expect(await t.db('items').where({ id: item.id }).first()).toBeDefined();
    await admin.delete(`/api/suppliers/${supplier.id}`).expect(404);
  });
});

describe('GET /api/suppliers/:id/deletion-check and DELETE /api/suppliers/:id/safe', () => {
  it('200 canDelete true for an unreferenced supplier; safe delete 204', async () => {
    const supplier = await buildSupplier(t.db);
    expect((await admin.get(`/api/suppliers/${supplier.id}/deletion-check`).expect(200)).body).toEqual({
      canDelete: true,
      reasons: [],
    });
    await admin.delete(`/api/suppliers/${supplier.id}/safe`).expect(204);
    expect(await t.db('suppliers').where({ id: supplier.id }).first()).toBeUndefined();
  });

  it('lists orders, item links and notes; safe delete 409 keeps everything', async () => {
    const supplier = await buildSupplier(t.db, { name: 'Linked' });
    await buildItemSource(t.db, supplier.id, (await buildItem(t.db)).id);
    await buildOrder(t.db, supplier.id, [{ name: 'Thing', quantity: '1', unitCost: '1.00' }]);
    await t.db('notes').insert({ text: 'n', reference_type: 'vendor', reference_id: supplier.id, created_by: null });
    const check = await admin.get(`/api/suppliers/${supplier.id}/deletion-check`).expect(200);
    expect(check.body.canDelete).toBe(false);
    expect(check.body.reasons).toEqual([
      'item sources: 1 record(s) reference it (supplier_id)',
      'orders: 1 record(s) reference it (supplier_id)',
      'notes: 1 note(s) are attached to it',
    ]);
    const res = await admin.delete(`/api/suppliers/${supplier.id}/safe`).expect(409);
    expect(res.body).toEqual({ message: "Cannot delete supplier 'Linked'", reasons: check.body.reasons });
    expect(await t.db('suppliers').where({ id: supplier.id }).first()).toBeDefined();
  });

  it('403 for a manager, 404 for an unknown supplier', async () => {
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    await manager.get('/api/suppliers/any/deletion-check').expect(403);
    await manager.delete('/api/suppliers/any/safe').expect(403);
    await admin.get('/api/suppliers/unknown/deletion-check').expect(404);
    await admin.delete('/api/suppliers/unknown/safe').expect(404);
  });
});

describe('the notes reference checks of vendor and order', () => {
  it('vendor takes a supplier id, order the numeric order id; unknown ids are not found', async () => {
    const supplier = await buildSupplier(t.db);
    const { order } = await buildOrder(t.db, supplier.id, [{ name: 'Thing', quantity: '1', unitCost: '1.00' }]);
    expect(await noteRecordExists('vendor', t.db, supplier.id)).toBe(true);
    expect(await noteRecordExists('vendor', t.db, 'ghost')).toBe(false);
    expect(await noteRecordExists('order', t.db, String(order.id))).toBe(true);
    expect(await noteRecordExists('order', t.db, '999999')).toBe(false);
    expect(await noteRecordExists('order', t.db, order.order_id)).toBe(false);
  });
});

describe('seeds/04_suppliers.ts', () => {
  it('adds two suppliers linked to existing items, and running it twice changes nothing', async () => {
    await buildItem(t.db, { price: '10.00' });
    await runSeeds(t.db, '04_suppliers.ts');
    await runSeeds(t.db, '04_suppliers.ts');
    const seeded = await t.db('suppliers').whereIn('id', ['fisher-scientific', 'vwr-international']);
    expect(seeded).toHaveLength(2);
    const links = await t.db('item_sources').whereIn('supplier_id', ['fisher-scientific', 'vwr-international']);
    expect(links.length).toBeGreaterThan(0);
    expect(new Set(links.map((l) => `${l.supplier_id}/${l.item_id}`)).size).toBe(links.length);
  });
});

describe('preferred item sources (replenishment, issue 17)', () => {
  const preferredOf = async (itemId: number) =>
    (await t.db('item_sources').where({ item_id: itemId }).orderBy('id').select('supplier_id', 'preferred')).map(
      (r) => [r.supplier_id, r.preferred],
    );

  it("201 a link made preferred unmarks the item's other sources; the supplier read shows the mark", async () => {
    const [a, b] = [await buildSupplier(t.db), await buildSupplier(t.db)];
    const item = await buildItem(t.db);
    const first = await user
      .post(`/api/suppliers/${a.id}/items`)
      .send({ itemId: item.id, price: '2.00', preferred: true })
      .expect(201);
    expect(first.body).toMatchObject({ supplierId: a.id, itemId: item.id, preferred: true });
    const second = await user
      .post(`/api/suppliers/${b.id}/items`)
      .send({ itemId: item.id, price: '3.00', preferred: true })
      .expect(201);
    expect(second.body.preferred).toBe(true);
    expect(await preferredOf(item.id)).toEqual([
      [a.id, false],
      [b.id, true],
    ]);
    const plain = await buildItem(t.db);
    expect(
      (await user.post(`/api/suppliers/${a.id}/items`).send({ itemId: plain.id, price: '1.00' }).expect(201)).body
        .preferred,
    ).toBe(false);
    const read = await user.get(`/api/suppliers/${b.id}`).expect(200);
    expect(read.body.items).toEqual([expect.objectContaining({ itemId: item.id, preferred: true })]);
  });

  it('200 PUT /api/sources/:id marks one preferred (the others unmarked), unmarks it, and changes price and notes', async () => {
    const [a, b, c] = [await buildSupplier(t.db), await buildSupplier(t.db), await buildSupplier(t.db)];
    const item = await buildItem(t.db, { name: 'Pipette' });
    const sa = await buildItemSource(t.db, a.id, item.id, '1.00');
    const sb = await buildItemSource(t.db, b.id, item.id, '2.00');
    await buildItemSource(t.db, c.id, item.id, '3.00');
    await user.put(`/api/sources/${sa.id}`).send({ preferred: true }).expect(200);
    const res = await user
      .put(`/api/sources/${sb.id}`)
      .send({ preferred: true, price: '1.75', notes: 'framework contract' })
      .expect(200);
    expect(res.body).toEqual({
      id: sb.id,
      supplierId: b.id,
      itemId: item.id,
      price: '1.75',
      notes: 'framework contract',
      supplierSku: null,
      preferred: true,
      createdAt: expect.any(String),
      item: { id: item.id, name: 'Pipette', sku: item.sku, isActive: true },
    });
    expect(await preferredOf(item.id)).toEqual([
      [a.id, false],
      [b.id, true],
      [c.id, false],
    ]);
    // marking the preferred one again changes nothing; false unmarks it, leaving none
    await user.put(`/api/sources/${sb.id}`).send({ preferred: true }).expect(200);
    expect((await user.put(`/api/sources/${sb.id}`).send({ preferred: false }).expect(200)).body).toMatchObject({
      preferred: false,
      price: '1.75',
    });
    expect((await preferredOf(item.id)).filter(([, p]) => p)).toEqual([]);
    // notes null clears them; an empty body changes nothing
    expect((await user.put(`/api/sources/${sb.id}`).send({ notes: null }).expect(200)).body.notes).toBeNull();
    expect((await user.put(`/api/sources/${sb.id}`).send({}).expect(200)).body).toMatchObject({
      price: '1.75',
      preferred: false,
    });
  });

  it('400 for a bad price or preferred, 404 for an unknown source, 401 without a session; nothing changes', async () => {
    const supplier = await buildSupplier(t.db);
    const item = await buildItem(t.db);
    const source = await buildItemSource(t.db, supplier.id, item.id, '4.00');
    const bad = await user.put(`/api/sources/${source.id}`).send({ price: '1.234', preferred: 'yes' }).expect(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['preferred', 'price']);
    await user
      .post(`/api/suppliers/${supplier.id}/items`)
      .send({ itemId: (await buildItem(t.db)).id, price: '1.00', preferred: 1 })
      .expect(400);
    expect((await user.put('/api/sources/99999999').send({ preferred: true }).expect(404)).body.message).toBe(
      'Item source not found',
    );
    await t.request.put(`/api/sources/${source.id}`).send({ preferred: true }).expect(401);
    expect(await t.db('item_sources').where({ id: source.id }).first()).toMatchObject({
      price: '4.00',
      preferred: false,
    });
  });

  it('the database holds at most one preferred source per item', async () => {
    const [a, b] = [await buildSupplier(t.db), await buildSupplier(t.db)];
    const item = await buildItem(t.db);
    await t.db('item_sources').insert({ supplier_id: a.id, item_id: item.id, price: '1.00', preferred: true });
    await expect(
      t.db('item_sources').insert({ supplier_id: b.id, item_id: item.id, price: '1.00', preferred: true }),
    ).rejects.toThrow(/item_sources_one_preferred/);
  });

  it('concurrent marks on one item leave exactly one preferred source', async () => {
    const suppliers = await Promise.all([1, 2, 3, 4].map(() => buildSupplier(t.db)));
    const item = await buildItem(t.db);
    const sources = await Promise.all(suppliers.map((s) => buildItemSource(t.db, s.id, item.id, '1.00')));
    const answers = await Promise.all(sources.map((s) => user.put(`/api/sources/${s.id}`).send({ preferred: true })));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect((await preferredOf(item.id)).filter(([, p]) => p)).toHaveLength(1);
  });
});

describe("the supplier's part number of an item source (supplierSku, issue 28)", () => {
  it('201 a link keeps the part number (blank is none); the supplier read lists it; PUT /api/sources/:id changes and clears it', async () => {
    const supplier = await buildSupplier(t.db);
    const [acetone, ethanol] = [await buildItem(t.db), await buildItem(t.db)];
    const linked = await user
      .post(`/api/suppliers/${supplier.id}/items`)
      .send({ itemId: acetone.id, price: '6.05', supplierSku: ' LSD-44120 ' })
      .expect(201);
    expect(linked.body).toMatchObject({ itemId: acetone.id, price: '6.05', supplierSku: 'LSD-44120' });
    expect(
      (
        await user
          .post(`/api/suppliers/${supplier.id}/items`)
          .send({ itemId: ethanol.id, price: '1.00', supplierSku: '' })
          .expect(201)
      ).body.supplierSku,
    ).toBeNull();
    const read = await user.get(`/api/suppliers/${supplier.id}`).expect(200);
    expect(
      read.body.items.map((s: { itemId: number; supplierSku: string | null }) => [s.itemId, s.supplierSku]).sort(),
    ).toEqual(
      [
        [acetone.id, 'LSD-44120'],
        [ethanol.id, null],
      ].sort(),
    );
    expect(
      (await user.put(`/api/sources/${linked.body.id}`).send({ supplierSku: 'LSD-44121' }).expect(200)).body,
    ).toMatchObject({ supplierSku: 'LSD-44121', price: '6.05' });
    expect(
      (await user.put(`/api/sources/${linked.body.id}`).send({ supplierSku: null }).expect(200)).body.supplierSku,
    ).toBeNull();
    expect(await t.db('item_sources').where({ id: linked.body.id }).first('supplier_sku')).toEqual({
      supplier_sku: null,
    });
  });

  it("409 naming the item when another of the supplier's items has the part number (in any case); another supplier may use it; 400 when too long", async () => {
    const [supplier, other] = [await buildSupplier(t.db), await buildSupplier(t.db)];
    const acetone = await buildItem(t.db, { name: 'Acetone 1 L' });
    const [ethanol, tips] = [await buildItem(t.db), await buildItem(t.db)];
    await user
      .post(`/api/suppliers/${supplier.id}/items`)
      .send({ itemId: acetone.id, price: '6.05', supplierSku: 'LSD-44120' })
      .expect(201);

    const clash = await user
      .post(`/api/suppliers/${supplier.id}/items`)
      .send({ itemId: ethanol.id, price: '1.00', supplierSku: 'lsd-44120' })
      .expect(409);
    expect(clash.body.message).toBe(
      `Supplier part number 'lsd-44120' is already used for item 'Acetone 1 L' of supplier '${supplier.id}'`,
    );
    expect(await t.db('item_sources').where({ supplier_id: supplier.id, item_id: ethanol.id }).first()).toBeUndefined();

    const source = await buildItemSource(t.db, supplier.id, tips.id, '2.00');
    const update = await user
      .put(`/api/sources/${source.id}`)
      .send({ supplierSku: 'LSD-44120', price: '2.50' })
      .expect(409);
    expect(update.body.message).toBe(
      `Supplier part number 'LSD-44120' is already used for item 'Acetone 1 L' of supplier '${supplier.id}'`,
    );
    expect(await t.db('item_sources').where({ id: source.id }).first('price', 'supplier_sku')).toEqual({
      price: '2.00',
      supplier_sku: null,
    });

    await user
      .post(`/api/suppliers/${other.id}/items`)
      .send({ itemId: ethanol.id, price: '1.00', supplierSku: 'LSD-44120' })
      .expect(201);
    const long = await user
      .post(`/api/suppliers/${other.id}/items`)
      .send({ itemId: tips.id, price: '1.00', supplierSku: 'X'.repeat(101) })
      .expect(400);
    expect(long.body.errors.map((e: { field: string }) => e.field)).toEqual(['supplierSku']);
  });
});
