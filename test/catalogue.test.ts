import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type supertest from 'supertest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem, buildUser } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';
import { buildStockedItem } from './helpers/inventory-factories';
import { loadConfig } from '../src/config';
import { signInService } from '../src/auth/sign-in.service';

let t: TestApp;
let requester: supertest.Agent;
let requesterEmail: string;
let staff: supertest.Agent;
let categoryId: number;

beforeAll(async () => {
  t = await testApp();
  const person = await buildUser(t.db, { role: 'requester' });
  requesterEmail = person.email;
  requester = await t.loginAs(person);
  staff = await t.loginAs(await buildUser(t.db, { role: 'user' }));
  categoryId = (await buildCategory(t.db, { name: 'Catalogue glassware' })).id;
});
afterAll(() => t.close());

describe('GET /api/catalogue', () => {
  it('401 without a session', () => t.request.get('/api/catalogue').expect(401));

  it('200 active items with their availability (in_stock, low, out), never the stock figure, for a requester and for staff', async () => {
    await buildStockedItem(t.db, 50, { name: 'Catflask plenty', categoryId, minimumStock: 5, price: '3.50' });
    await buildStockedItem(t.db, 5, { name: 'Catflask few', categoryId, minimumStock: 5 });
    await buildStockedItem(t.db, 0, { name: 'Catflask none', categoryId, minimumStock: 0 });
    await buildItem(t.db, { name: 'Catflask retired', categoryId, currentStock: 9, isActive: false });

    for (const agent of [requester, staff]) {
      const res = await agent.get('/api/catalogue').query({ search: 'catflask', limit: 10 }).expect(200);
      expect(res.body.total).toBe(3);
      expect(res.body).toMatchObject({ page: 1, limit: 10, totalPages: 1 });
      expect(res.body.items.map((i: { name: string; availability: string }) => [i.name, i.availability])).toEqual([
        ['Catflask few', 'low'],
        ['Catflask none', 'out'],
        ['Catflask plenty', 'in_stock'],
      ]);
      const plenty = res.body.items[2];
      expect(plenty).toMatchObject({ price: '3.50', category: { id: categoryId, name: 'Catalogue glassware' } });
      expect(Object.keys(plenty).sort()).toEqual(
        ['availability', 'category', 'description', 'id', 'name', 'price', 'sku', 'vatRate'].sort(),
      );
      expect(JSON.stringify(res.body)).not.toMatch(/currentStock|minimumStock|current_stock/);
    }
  });

  it('200 filters by category and pages', async () => {
    const other = await buildCategory(t.db);
    await buildStockedItem(t.db, 1, { name: 'Only in other', categoryId: other.id });
    const res = await requester.get('/api/catalogue').query({ categoryId: other.id }).expect(200);
    expect(res.body.items.map((i: { name: string }) => i.name)).toEqual(['Only in other']);
    const paged = await requester.get('/api/catalogue').query({ search: 'catflask', limit: 1, page: 2 }).expect(200);
    expect(paged.body.items.map((i: { name: string }) => i.name)).toEqual(['Catflask none']);
    expect(paged.body.totalPages).toBe(3);
  });

  it('400 names an invalid query field', async () => {
    const res = await requester.get('/api/catalogue').query({ limit: 0 }).expect(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: 'limit' }));
  });
});

describe('GET /api/catalogue/charge-codes', () => {
  it("200 the codes the person is an authorised user of (by email, any case), with validity, hold and the code's spending", async () => {
    const mine = await buildChargeCode(t.db, {
      title: 'My grant',
      authorisedEmails: [requesterEmail.toUpperCase()],
      approverEmail: 'pi@example.ac.uk',
      approvalThreshold: '250.00',
    });
    const held = await buildChargeCode(t.db, {
      title: 'Held grant',
      onHold: true,
      holdReason: 'Audit',
      authorisedEmails: [requesterEmail],
    });
    await buildChargeCode(t.db, { title: 'Not mine', authorisedEmails: ['someone@example.ac.uk'] });
    // a sale on my code, through the counter
    const item = await buildStockedItem(t.db, 10, { price: '10.00', vatRate: '0' });
    await staff
      .post('/api/sales')
      .send({ chargeCode: mine.code, items: [{ itemId: item.id, quantity: 2 }] })
      .expect(201);

    const res = await requester.get('/api/catalogue/charge-codes').expect(200);
    const codes = [mine.code, held.code].sort();
    expect(res.body.map((c: { code: string }) => c.code)).toEqual(codes);
    const got = (code: string) => res.body.find((c: { code: string }) => c.code === code);
    expect(got(mine.code)).toMatchObject({
      title: 'My grant',
      valid: true,
      onHold: false,
      holdReason: null,
      usable: true,
      approverEmail: 'pi@example.ac.uk',
      approvalThreshold: '250.00',
      spending: { sales: 1, totalAmount: '20.00', refundedAmount: '0.00', netAmount: '20.00' },
    });
    expect(got(held.code)).toMatchObject({
      onHold: true,
      holdReason: 'Audit',
      usable: false,
      spending: { sales: 0, totalAmount: '0.00', netAmount: '0.00' },
    });
  });

  it('200 an empty list for a person authorised on no code', async () => {
    const other = await t.loginAs(await buildUser(t.db, { role: 'requester' }));
    expect((await other.get('/api/catalogue/charge-codes').expect(200)).body).toEqual([]);
  });
});

describe('the requester role', () => {
  it('403 on the staff API (items, sales, charge codes, quotes), 200 on their own account', async () => {
    for (const path of ['/api/items', '/api/sales', '/api/chargecodes', '/api/sales/quotes', '/api/dashboard/stats']) {
      const res = await requester.get(path);
      expect(res.status, path).toBe(403);
    }
    const me = await requester.get('/api/auth/user').expect(200);
    expect(me.body).toMatchObject({ email: requesterEmail, role: 'requester' });
  });

  it('an admin makes a requester with POST /api/users and the role change routes', async () => {
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const created = await admin
      .post('/api/users')
      .send({
        email: 'new-requester@example.ac.uk',
        firstName: 'New',
        role: 'requester',
        password: 'a long enough password 123',
      })
      .expect(201);
    expect(created.body.role ?? created.body.user?.role).toBe('requester');
    const user = await buildUser(t.db, { role: 'user' });
    const changed = await admin.put(`/api/users/${user.id}/role`).send({ role: 'requester' }).expect(200);
    expect(changed.body.role).toBe('requester');
  });

  it('the staff pages answer a requester with the 403 page; their home page is the catalogue, not the dashboard', async () => {
    const home = await requester.get('/').expect(200);
    expect(home.text).toContain('Catalogue');
    expect(home.text).not.toContain('Stock value by category');
    for (const path of ['/stocktakes', '/items', '/counter', '/sales', '/chargecodes']) {
      const res = await requester.get(path);
      expect(res.status, path).toBe(403);
    }
    await requester.get('/account').expect(200);
  });

  it('SSO_DEFAULT_ROLE decides the role of a first single sign-on: user unset, requester when set; a bad value is refused', async () => {
    expect(loadConfig({}).ssoDefaultRole).toBe('user');
    expect(() => loadConfig({ SSO_DEFAULT_ROLE: 'guest' })).toThrow(/SSO_DEFAULT_ROLE/);
    const client = { kind: 'anonymous' as const, userId: null, email: null, mcpKeyId: null, ip: '127.0.0.1' };
    const claims = (name: string) => ({
      sub: `sub-${name}`,
      email: `${name}@example.ac.uk`,
      email_verified: true,
      given_name: 'Sso',
      family_name: name,
    });
    const asDefault = await signInService(t.db, t.config).withSso(claims(`default-${Date.now()}`), client);
    expect(asDefault.role).toBe('user');
    const requesters = signInService(t.db, {
      ...t.config,
      ...{ ssoDefaultRole: loadConfig({ SSO_DEFAULT_ROLE: 'requester' }).ssoDefaultRole },
    });
    const first = await requesters.withSso(claims(`campus-${Date.now()}`), client);
    expect(first.role).toBe('requester');
  });
});
