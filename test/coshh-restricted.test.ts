import type supertest from 'supertest';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { binaryBody } from './helpers/binary-body';
import { buildCategory, buildUser } from './helpers/factories';
import { buildStockedItem, stockOf } from './helpers/inventory-factories';
import { buildChargeCode, sessionId } from './helpers/sales-factories';
import type { UserRow } from '../src/modules/users/users.service';

// Issue 43: COSHH assessment references and restricted substances at the point of sale.

let t: TestApp;
let clerk: UserRow;
let user: supertest.Agent;
let managerRow: UserRow;
let manager: supertest.Agent;
let admin: supertest.Agent;
let code: string;

beforeAll(async () => {
  t = await testApp();
  clerk = await buildUser(t.db, { firstName: 'Sam', lastName: 'Clerk' });
  user = await t.loginAs(clerk);
  managerRow = await buildUser(t.db, { role: 'manager' });
  manager = await t.loginAs(managerRow);
  admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
  code = (await buildChargeCode(t.db)).code;
});
afterAll(() => t.close());

const flag = (id: number, fields: { coshh_required?: boolean; restricted?: boolean }) =>
  t.db('items').where({ id }).update(fields);

/** What a refused sale must leave untouched: the sales, the numbers issued, the stock movements. */
async function writtenState(itemIds: number[]) {
  const [{ n: sales }] = await t.db('sales').count<{ n: string }[]>('* as n');
  const counters = await t.db('sale_number_counters').select('day', 'last_number').orderBy('day');
  const [{ n: movements }] = await t.db('stock_movements').count<{ n: string }[]>('* as n');
  const stock = await Promise.all(itemIds.map((id) => stockOf(t.db, id)));
  return { sales, counters, movements, stock };
}

const auditOf = async (saleId: number) =>
  (
    await admin
      .get('/api/audit')
      .query({ entityType: 'sale', entityId: String(saleId), action: 'restricted_sale' })
      .expect(200)
  ).body.events as { action: string; actor: { userId: string | null }; after: Record<string, unknown> }[];

describe('items and categories carry the flags', () => {
  it('managers set coshhRequired and restricted on create and update; the category flag makes needsCoshhReference; a user may not', async () => {
    const category = await buildCategory(t.db);
    const created = await manager
      .post('/api/items')
      .send({
        name: 'Chloroform',
        sku: `CHL-${Date.now()}`,
        categoryId: category.id,
        price: '5.00',
        coshhRequired: true,
      })
      .expect(201);
    expect(created.body).toMatchObject({ coshhRequired: true, needsCoshhReference: true, restricted: false });

    const updated = await manager
      .put(`/api/items/${created.body.id}`)
      .send({ coshhRequired: false, restricted: true })
      .expect(200);
    expect(updated.body).toMatchObject({ coshhRequired: false, needsCoshhReference: false, restricted: true });
    expect((await manager.put(`/api/items/${created.body.id}`).send({ restricted: 'yes' }).expect(400)).body).toEqual({
      message: 'Validation failed',
      errors: [{ field: 'restricted', message: 'must be a boolean' }],
    });
    await user.put(`/api/items/${created.body.id}`).send({ restricted: false }).expect(403);

    const plain = await manager
      .post('/api/items')
      .send({ name: 'Water', sku: `W-${Date.now()}`, categoryId: category.id, price: '1.00' });
    expect(plain.status).toBe(201);
    expect(plain.body).toMatchObject({ coshhRequired: false, needsCoshhReference: false, restricted: false });

    const cat = await manager.put(`/api/categories/${category.id}`).send({ coshhRequired: true }).expect(200);
    expect(cat.body.coshhRequired ?? cat.body.category?.coshhRequired).toBe(true);
    const read = await user.get(`/api/items/${plain.body.id}`).expect(200);
    expect(read.body).toMatchObject({ coshhRequired: false, needsCoshhReference: true });

    const newCategory = await manager
      .post('/api/categories')
      .send({ name: `Solvents ${Date.now()}`, coshhRequired: true })
      .expect(201);
    expect(newCategory.body.coshhRequired ?? newCategory.body.category?.coshhRequired).toBe(true);
    const listed = (await user.get('/api/categories').expect(200)).body as { id: number; coshhRequired: boolean }[];
    expect(listed.find((c) => c.id === category.id)?.coshhRequired).toBe(true);
  });

  it('export writes COSHH Required and Restricted; import reads them (yes/no, true/false, blank)', async () => {
    const category = await buildCategory(t.db, { name: `Gases ${Date.now()}` });
    const item = await buildStockedItem(t.db, 1, { categoryId: category.id, sku: `EXP-${Date.now()}` });
    await flag(item.id, { restricted: true });
    const csv = await manager
      .post('/api/items/bulk/export')
      .send({ itemIds: [item.id], format: 'csv' })
      .expect(200);
    const [row] = parseCsv(csv.text, { bom: true, columns: true }) as Record<string, string>[];
    expect(row).toMatchObject({ 'COSHH Required': 'no', Restricted: 'yes' });
    const xlsx = await manager
      .post('/api/items/bulk/export')
      .send({ itemIds: [item.id] })
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    const { default: ExcelJS } = await import('exceljs');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(xlsx.body as never);
    const sheet = workbook.getWorksheet('Items')!;
    const headers = (sheet.getRow(1).values as unknown[]).map(String);
    const column = (header: string) => headers.indexOf(header);
    expect(['COSHH Required', 'Restricted'].map((h) => [h, sheet.getRow(2).getCell(column(h)).value])).toEqual([
      ['COSHH Required', 'no'],
      ['Restricted', 'yes'],
    ]);

    const stamp = Date.now();
    const imported = await manager
      .post('/api/items/bulk-import')
      .send({
        items: [
          {
            name: 'A',
            sku: `IMP-A-${stamp}`,
            categoryName: category.name,
            price: '1',
            currentStock: '0',
            coshhRequired: 'Yes',
            restricted: 'no',
          },
          {
            name: 'B',
            sku: `IMP-B-${stamp}`,
            categoryName: category.name,
            price: '1',
            currentStock: '0',
            coshhRequired: '',
            restricted: true,
          },
          {
            name: 'C',
            sku: `IMP-C-${stamp}`,
            categoryName: category.name,
            price: '1',
            currentStock: '0',
            restricted: 'perhaps',
          },
        ],
      })
      .expect(200);
    expect(imported.body.successful).toBe(2);
    expect(imported.body.errors).toHaveLength(1);
    expect(imported.body.errors[0]).toContain('restricted');
    const rows = await t
      .db('items')
      .whereIn('sku', [`IMP-A-${stamp}`, `IMP-B-${stamp}`])
      .orderBy('sku');
    expect(rows.map((r) => [r.coshh_required, r.restricted])).toEqual([
      [true, false],
      [false, true],
    ]);
  });
});

describe('COSHH assessment reference on POST /api/sales', () => {
  it('400 naming the first line that needs one (of three, one by its category); nothing written, no sale number used', async () => {
    const coshhCategory = await buildCategory(t.db);
    await t.db('categories').where({ id: coshhCategory.id }).update({ coshh_required: true });
    const plain = await buildStockedItem(t.db, 10, { sku: `PLAIN-${Date.now()}` });
    const byCategory = await buildStockedItem(t.db, 10, { sku: `ACET-${Date.now()}`, categoryId: coshhCategory.id });
    const own = await buildStockedItem(t.db, 10, { sku: `PHEN-${Date.now()}` });
    await flag(own.id, { coshh_required: true });
    const items = [
      { itemId: plain.id, quantity: 1 },
      { itemId: byCategory.id, quantity: 2 },
      { itemId: own.id, quantity: 3 },
    ];
    const before = await writtenState([plain.id, byCategory.id, own.id]);
    const res = await user.post('/api/sales').send({ chargeCode: code, items }).expect(400);
    expect(res.body).toEqual({ message: `A COSHH assessment reference is required for ${byCategory.sku}` });
    // the item's own flag, when its line comes first
    const reordered = await user
      .post('/api/sales')
      .send({ chargeCode: code, items: [items[0], items[2], items[1]] })
      .expect(400);
    expect(reordered.body.message).toBe(`A COSHH assessment reference is required for ${own.sku}`);
    expect(await writtenState([plain.id, byCategory.id, own.id])).toEqual(before);

    const sold = await user
      .post('/api/sales')
      .send({ chargeCode: code, items, coshhReference: '  COSHH-2026-014  ' })
      .expect(201);
    expect(sold.body.sale.coshhReference).toBe('COSHH-2026-014');
    expect(await stockOf(t.db, own.id)).toBe('7.00');
    const read = await user.get(`/api/sales/${sold.body.sale.id}`).expect(200);
    expect(read.body.coshhReference).toBe('COSHH-2026-014');

    // a sale without COSHH items: null
    const none = await user
      .post('/api/sales')
      .send({ chargeCode: code, items: [items[0]] })
      .expect(201);
    expect(none.body.sale.coshhReference).toBeNull();
  });

  it('400 naming coshhReference when empty or over 100 characters', async () => {
    const item = await buildStockedItem(t.db, 10);
    for (const coshhReference of ['', '   ', 'x'.repeat(101), 42]) {
      const res = await user
        .post('/api/sales')
        .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 1 }], coshhReference })
        .expect(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['coshhReference']);
    }
    const exactly100 = await user
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 1 }], coshhReference: 'x'.repeat(100) })
      .expect(201);
    expect(exactly100.body.sale.coshhReference).toHaveLength(100);
  });

  it("in the spec's order: after the charge-code checks, before the restricted check and stock", async () => {
    const coshh = await buildStockedItem(t.db, 1, { sku: `ORD-C-${Date.now()}` });
    await flag(coshh.id, { coshh_required: true });
    const restricted = await buildStockedItem(t.db, 1, { sku: `ORD-R-${Date.now()}` });
    await flag(restricted.id, { restricted: true });
    const expired = await buildChargeCode(t.db, {
      validFrom: new Date(Date.now() - 10 * 86_400_000),
      validUntil: new Date(Date.now() - 86_400_000),
    });

    // (1) the charge code first
    const codeFirst = await user
      .post('/api/sales')
      .send({ chargeCode: expired.code, items: [{ itemId: coshh.id, quantity: 1 }] })
      .expect(400);
    expect(codeFirst.body.message).toMatch(/^Charge code '.+' has expired on /);
    // then COSHH, before the restricted substance and before stock (5 asked, 1 held)
    const coshhNext = await user
      .post('/api/sales')
      .send({
        chargeCode: code,
        items: [
          { itemId: restricted.id, quantity: 5 },
          { itemId: coshh.id, quantity: 5 },
        ],
      })
      .expect(400);
    expect(coshhNext.body.message).toBe(`A COSHH assessment reference is required for ${coshh.sku}`);
    // then the restricted substance, before stock
    const restrictedNext = await user
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: restricted.id, quantity: 5 }] })
      .expect(403);
    expect(restrictedNext.body.message).toBe(
      `${restricted.sku} is a restricted substance: a manager must process this sale`,
    );
    // a manager gets on to the stock check
    const stockLast = await manager
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: restricted.id, quantity: 5 }] })
      .expect(400);
    expect(stockLast.body.message).toMatch(/^Insufficient stock for item /);
  });
});

describe('Search sales finds the COSHH reference', () => {
  it('GET /api/sales?search= and the Search sales page find the sale by its reference (or part of it)', async () => {
    const item = await buildStockedItem(t.db, 5);
    await flag(item.id, { coshh_required: true });
    const reference = `RA-${Date.now()}-TOLUENE`;
    const sold = await user
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 1 }], coshhReference: reference })
      .expect(201);
    const found = await user.get('/api/sales').query({ search: reference.toLowerCase() }).expect(200);
    expect(found.body.sales.map((s: { id: number }) => s.id)).toEqual([sold.body.sale.id]);
    const part = await user
      .get('/api/sales')
      .query({ search: reference.slice(3) })
      .expect(200);
    expect(part.body.sales.map((s: { id: number }) => s.id)).toEqual([sold.body.sale.id]);

    const page = await user.get('/sales').query({ search: reference }).expect(200);
    expect(page.text).toContain(sold.body.sale.saleId);
    const show = await user.get(`/sales/${sold.body.sale.id}`).expect(200);
    expect(show.text).toMatch(/<dt>COSHH assessment<\/dt><dd>RA-\d+-TOLUENE<\/dd>/);
  });

  it("the sales report CSV's Notes column stays the customer notes", async () => {
    const item = await buildStockedItem(t.db, 5);
    await flag(item.id, { coshh_required: true });
    const chargeCode = (await buildChargeCode(t.db)).code;
    await user
      .post('/api/sales')
      .send({
        chargeCode,
        items: [{ itemId: item.id, quantity: 1 }],
        coshhReference: 'RA-CSV-1',
        customerNotes: 'For lab 2',
      })
      .expect(201);
    const csv = await user.get('/api/sales/reports').query({ chargeCode, format: 'csv' }).expect(200);
    const rows = parseCsv(csv.text, { bom: true, columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(1);
    expect(rows[0].Notes).toBe('For lab 2');
    expect(csv.text).not.toContain('RA-CSV-1');
  });
});

describe('restricted substances', () => {
  it('403 a user selling one over the API (nothing written); a manager 201 with an audit entry naming them', async () => {
    const item = await buildStockedItem(t.db, 10, { sku: `NERVE-${Date.now()}` });
    await flag(item.id, { restricted: true });
    const other = await buildStockedItem(t.db, 10);
    const items = [
      { itemId: other.id, quantity: 1 },
      { itemId: item.id, quantity: 1 },
    ];
    const before = await writtenState([item.id, other.id]);
    const refused = await user.post('/api/sales').send({ chargeCode: code, items }).expect(403);
    expect(refused.body).toEqual({
      message: `${item.sku} is a restricted substance: a manager must process this sale`,
    });
    expect(await writtenState([item.id, other.id])).toEqual(before);

    const sold = await manager.post('/api/sales').send({ chargeCode: code, items }).expect(201);
    const [entry, ...more] = await auditOf(sold.body.sale.id);
    expect(more).toEqual([]);
    expect(entry.actor).toMatchObject({ kind: 'session', userId: managerRow.id, email: managerRow.email });
    expect(entry.after).toMatchObject({
      saleId: sold.body.sale.saleId,
      processedBy: managerRow.id,
      processedByEmail: managerRow.email,
      lines: [{ itemId: item.id, sku: item.sku, quantity: '1.00' }],
    });
    // an admin may too; a sale without a restricted substance writes no such entry
    await admin
      .post('/api/sales')
      .send({ chargeCode: code, items: [items[1]] })
      .expect(201);
    const plain = await user
      .post('/api/sales')
      .send({ chargeCode: code, items: [items[0]] })
      .expect(201);
    expect(await auditOf(plain.body.sale.id)).toEqual([]);
  });
});

describe('processing a quote (the counter)', () => {
  async function draftOf(agent: supertest.Agent, itemIds: number[]) {
    const res = await agent
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: sessionId(), items: itemIds.map((itemId) => ({ itemId, quantity: 1 })) })
      .expect(200);
    return res.body.quote as { id: number };
  }

  it('400 without the COSHH reference (the quote kept), 200 with it; 403 a restricted substance by a user, 200 by a manager with the audit entry', async () => {
    const coshh = await buildStockedItem(t.db, 10, { sku: `Q-COSHH-${Date.now()}` });
    await flag(coshh.id, { coshh_required: true });
    const quote = await draftOf(user, [coshh.id]);
    const missing = await user.post(`/api/sales/quotes/${quote.id}/process`).send({}).expect(400);
    expect(missing.body.message).toBe(`A COSHH assessment reference is required for ${coshh.sku}`);
    expect(await t.db('quotes').where({ id: quote.id }).first()).toBeDefined();
    expect(await stockOf(t.db, coshh.id)).toBe('10.00');
    const processed = await user
      .post(`/api/sales/quotes/${quote.id}/process`)
      .send({ coshhReference: 'COSHH/CHEM/7' })
      .expect(200);
    expect(processed.body.sale.coshhReference).toBe('COSHH/CHEM/7');

    const restricted = await buildStockedItem(t.db, 10, { sku: `Q-RESTR-${Date.now()}` });
    await flag(restricted.id, { restricted: true });
    const usersQuote = await draftOf(user, [restricted.id]);
    const refused = await user.post(`/api/sales/quotes/${usersQuote.id}/process`).expect(403);
    expect(refused.body.message).toBe(`${restricted.sku} is a restricted substance: a manager must process this sale`);
    expect(await t.db('quotes').where({ id: usersQuote.id }).first()).toBeDefined();
    expect(await stockOf(t.db, restricted.id)).toBe('10.00');

    const managersQuote = await draftOf(manager, [restricted.id]);
    const sold = await manager.post(`/api/sales/quotes/${managersQuote.id}/process`).expect(200);
    const entries = await auditOf(sold.body.sale.id);
    expect(entries).toHaveLength(1);
    expect(entries[0].actor.userId).toBe(managerRow.id);
  });
});

describe("the counter's Process sale (the page)", () => {
  it('a user processing a restricted substance is told on the counter (403), the basket kept; the COSHH reference passes through the form', async () => {
    const restricted = await buildStockedItem(t.db, 10, { sku: `CTR-R-${Date.now()}` });
    await flag(restricted.id, { restricted: true, coshh_required: true });
    const agent = await t.loginAs(await buildUser(t.db));
    const csrf = /name="_csrf" value="([^"]+)"/.exec((await agent.get('/counter').expect(200)).text)![1];
    await agent.post('/counter/add').type('form').send({ _csrf: csrf, sku: restricted.sku }).expect(303);
    await agent.post('/counter/charge-code').type('form').send({ _csrf: csrf, chargeCode: code }).expect(303);
    const missing = await agent.post('/counter/process').type('form').send({ _csrf: csrf }).expect(422);
    expect(missing.text).toContain(`A COSHH assessment reference is required for ${restricted.sku}`);
    const refused = await agent
      .post('/counter/process')
      .type('form')
      .send({ _csrf: csrf, coshhReference: 'RA-CTR-1' })
      .expect(403);
    expect(refused.text).toContain(`${restricted.sku} is a restricted substance: a manager must process this sale`);
    expect(refused.text).toContain(restricted.sku);
    expect(await stockOf(t.db, restricted.id)).toBe('10.00');
  });
});

describe('requests', () => {
  let requester: UserRow;
  let asRequester: supertest.Agent;
  let approverAgent: supertest.Agent;
  beforeAll(async () => {
    requester = await buildUser(t.db, { role: 'requester' });
    asRequester = await t.loginAs(requester);
    const approver = await buildUser(t.db, { role: 'requester', email: `pi43-${Date.now()}@example.ac.uk` });
    approverAgent = await t.loginAs(approver);
  });

  it('a COSHH item needs the reference at submission (after the charge code); it is carried to the sale', async () => {
    const rcode = await buildChargeCode(t.db, { authorisedEmails: [requester.email] });
    const item = await buildStockedItem(t.db, 10, { sku: `RQ-COSHH-${Date.now()}` });
    await flag(item.id, { coshh_required: true });
    const unknownCode = await asRequester
      .post('/api/requests')
      .send({ chargeCode: 'NOPE-43', items: [{ itemId: item.id, quantity: 1 }] })
      .expect(400);
    expect(unknownCode.body.message).not.toContain('COSHH');
    const missing = await asRequester
      .post('/api/requests')
      .send({ chargeCode: rcode.code, items: [{ itemId: item.id, quantity: 1 }] })
      .expect(400);
    expect(missing.body).toEqual({ message: `A COSHH assessment reference is required for ${item.sku}` });
    const tooLong = await asRequester
      .post('/api/requests')
      .send({ chargeCode: rcode.code, items: [{ itemId: item.id, quantity: 1 }], coshhReference: 'y'.repeat(101) })
      .expect(400);
    expect(tooLong.body.errors.map((e: { field: string }) => e.field)).toEqual(['coshhReference']);
    const submitted = await asRequester
      .post('/api/requests')
      .send({ chargeCode: rcode.code, items: [{ itemId: item.id, quantity: 1 }], coshhReference: 'RA-REQ-1' })
      .expect(201);
    expect(submitted.body).toMatchObject({
      status: 'submitted',
      coshhReference: 'RA-REQ-1',
      restrictedApproval: { required: false, approvedBy: null, approvedAt: null },
    });
    const fulfilled = await user.post(`/api/requests/${submitted.body.id}/fulfil`).send({}).expect(200);
    const sale = await user.get(`/api/sales/${fulfilled.body.saleId}`).expect(200);
    expect(sale.body.coshhReference).toBe('RA-REQ-1');
    await manager.post(`/api/requests/${submitted.body.id}/approve-restricted`).send({}).expect(409);
  });

  it('a restricted item waits for a manager on top of the charge-code approval; fulfilled only once both approved', async () => {
    const rcode = await buildChargeCode(t.db, {
      authorisedEmails: [requester.email],
      approverEmail: (await t.db('users').whereNot({ id: requester.id }).where('email', 'like', 'pi43-%').first())
        .email,
      approvalThreshold: '5.00',
    });
    const item = await buildStockedItem(t.db, 10, { sku: `RQ-RESTR-${Date.now()}`, price: '20.00', vatRate: '0' });
    await flag(item.id, { restricted: true });
    const submitted = await asRequester
      .post('/api/requests')
      .send({ chargeCode: rcode.code, items: [{ itemId: item.id, quantity: 1 }] })
      .expect(201);
    const id = submitted.body.id as number;
    expect(submitted.body).toMatchObject({
      status: 'awaiting_approval',
      restrictedApproval: { required: true, approvedBy: null, approvedAt: null },
    });
    const queue = await manager.get('/api/requests').query({ restrictedToApprove: true }).expect(200);
    expect(queue.body.requests.map((r: { id: number }) => r.id)).toContain(id);

    // the code's approval first: still not fulfilled
    await manager.post(`/api/requests/${id}/fulfil`).send({}).expect(409);
    await approverAgent.post(`/api/requests/${id}/approve`).send({}).expect(200);
    const waiting = await manager.post(`/api/requests/${id}/fulfil`).send({}).expect(409);
    expect(waiting.body.message).toBe(
      `Request ${submitted.body.reference} holds a restricted substance: a manager must approve it (POST /api/requests/${id}/approve-restricted) before it is fulfilled`,
    );
    expect(await stockOf(t.db, item.id)).toBe('10.00');

    // who may approve: a manager or admin, never the requester; the code's approver (a requester) and a user may not
    await user.post(`/api/requests/${id}/approve-restricted`).send({}).expect(403);
    await approverAgent.post(`/api/requests/${id}/approve-restricted`).send({}).expect(403);
    await asRequester.post(`/api/requests/${id}/approve-restricted`).send({}).expect(403);
    const approved = await manager
      .post(`/api/requests/${id}/approve-restricted`)
      .send({ comment: 'Licence checked' })
      .expect(200);
    expect(approved.body).toMatchObject({
      status: 'approved',
      restrictedApproval: { required: true, approvedBy: { id: managerRow.id, email: managerRow.email } },
    });
    expect(approved.body.restrictedApproval.approvedAt).toEqual(expect.any(String));
    expect(approved.body.history.at(-1)).toMatchObject({
      status: 'approved',
      comment: 'Restricted substances approved by a manager: Licence checked',
    });
    expect((await manager.post(`/api/requests/${id}/approve-restricted`).send({}).expect(409)).body.message).toBe(
      `The restricted substances of request ${submitted.body.reference} are already approved`,
    );
    const queueAfter = await manager.get('/api/requests').query({ restrictedToApprove: true }).expect(200);
    expect(queueAfter.body.requests.map((r: { id: number }) => r.id)).not.toContain(id);

    // both in: any staff member fulfils it; the sale is in the audit trail with who fulfilled it and who approved
    const fulfilled = await user.post(`/api/requests/${id}/fulfil`).send({}).expect(200);
    expect(fulfilled.body.status).toBe('ready');
    expect(await stockOf(t.db, item.id)).toBe('9.00');
    const [entry] = await auditOf(fulfilled.body.saleId);
    expect(entry.actor.userId).toBe(clerk.id);
    expect(entry.after).toMatchObject({ processedBy: clerk.id, restrictedApprovedBy: managerRow.id });
  });

  it('a restricted request under the threshold is submitted but still waits for the manager; the requester may not approve their own', async () => {
    const rcode = await buildChargeCode(t.db, { authorisedEmails: [managerRow.email] });
    const item = await buildStockedItem(t.db, 10);
    await flag(item.id, { restricted: true });
    const own = await manager
      .post('/api/requests')
      .send({ chargeCode: rcode.code, items: [{ itemId: item.id, quantity: 1 }] })
      .expect(201);
    expect(own.body.status).toBe('submitted');
    await manager.post(`/api/requests/${own.body.id}/fulfil`).send({}).expect(409);
    const self = await manager.post(`/api/requests/${own.body.id}/approve-restricted`).send({}).expect(403);
    expect(self.body.message).toBe('You cannot approve your own request; it needs another manager or an admin');
    await admin.post(`/api/requests/${own.body.id}/approve-restricted`).send({}).expect(200);
    await manager.post(`/api/requests/${own.body.id}/fulfil`).send({}).expect(200);
  });
});
