import type supertest from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { buildStockedItem, movementsOf, stockOf } from './helpers/inventory-factories';
import { buildMcpKey, mcpTestServer, type McpTestServer } from './helpers/mcp-factories';
import { buildItemSource, buildSupplier } from './helpers/purchasing-factories';
import { buildChargeCode, grantPermission } from './helpers/sales-factories';

// The tools for the rest of a stores day (issue 29): purchasing, replenishment, finding sales, notes and refunds,
// called with the SDK's own client; each write goes through the API's service and is audited as the key.

let t: TestApp;
let mcp: McpTestServer;
let clerk: supertest.Agent;
let admin: { id: string; email: string };
let beaker: { id: number; sku: string };
let supplierId: string;

beforeAll(async () => {
  t = await testApp();
  mcp = await mcpTestServer(t.app);
  admin = await buildUser(t.db, { role: 'admin', firstName: 'Ada', lastName: 'Admin' });
  clerk = await t.loginAs(await buildUser(t.db));
  const glass = await buildCategory(t.db, { name: 'Glassware' });
  beaker = await buildStockedItem(t.db, 100, {
    name: 'Beaker 250 ml',
    sku: 'BK-250',
    categoryId: glass.id,
    price: '10.00',
    minimumStock: 5,
  });
  supplierId = (await buildSupplier(t.db, { id: 'fisher', name: 'Fisher Scientific' })).id;
  await buildItemSource(t.db, supplierId, beaker.id, '4.50');
  await buildChargeCode(t.db, { code: 'PHYS-001' });
});
afterEach(() => mcp?.closeClients());
afterAll(async () => {
  await mcp?.close();
  await t?.close();
});

/** A client of a new key of `creator` (the admin unless given), which has read the tool list so that it checks each result against its output schema. */
async function clientOf(scope: 'read' | 'write', creator = admin.id) {
  const key = await buildMcpKey(t.db, {
    name: 'Stores bot',
    scopes: scope === 'write' ? ['read', 'write'] : ['read'],
    createdBy: creator,
  });
  return { ...(await mcp.connect(key.key)), keyId: key.id };
}

const auditOf = (entityType: string, entityId: string | number) =>
  t
    .db('audit_log')
    .where({ entity_type: entityType, entity_id: String(entityId) })
    .orderBy('id');
const mcpActor = (keyId: number) => ({
  actor_kind: 'mcp-key',
  actor_user_id: admin.id,
  actor_email: admin.email,
  actor_mcp_key_id: keyId,
});

describe('suppliers and item sources', () => {
  it('list_suppliers and get_supplier read them with the item sources; a read key has no write tool', async () => {
    const { client, call } = await clientOf('read');
    expect((await call('list_suppliers')).structuredContent.suppliers).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: 'fisher', name: 'Fisher Scientific' })]),
    );
    const fisher = await call('get_supplier', { supplierId: 'fisher' });
    expect(fisher.structuredContent).toMatchObject({
      id: 'fisher',
      items: [expect.objectContaining({ itemId: beaker.id, price: '4.50' })],
    });
    expect((await call('get_supplier', { supplierId: 'nobody' })).content[0].text).toMatch(/^MCP_NOT_FOUND: /);
    const sources = await call('item_sources', { sku: 'BK-250' });
    expect(sources.structuredContent.sources).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          supplierId: 'fisher',
          supplierName: 'Fisher Scientific',
          itemId: beaker.id,
          price: '4.50',
        }),
      ]),
    );
    expect((await call('item_sources', { itemId: beaker.id })).structuredContent).toEqual(sources.structuredContent);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'list_suppliers',
        'get_supplier',
        'item_sources',
        'get_purchase_order',
        'replenishment_suggestions',
        'find_sales',
        'find_quotes',
        'list_notes',
      ]),
    );
    for (const write of [
      'create_supplier',
      'link_item_source',
      'create_purchase_order',
      'receive_purchase_order',
      'create_replenishment_orders',
      'add_note',
      'refund_sale',
    ]) {
      expect(names, write).not.toContain(write);
    }
  });

  it('item_sources lists the sources by supplier name, sources of equally named suppliers in the order they were linked', async () => {
    const flask = await buildStockedItem(t.db, 10, { name: 'Flask 500 ml', sku: 'FL-500' });
    for (const [id, name, price] of [
      ['zeta', 'Zeta Labs', '3.00'],
      ['acme-2', 'Acme', '2.00'],
      ['acme-1', 'Acme', '2.50'],
      ['mid', 'Middleton', '1.00'],
    ]) {
      await buildSupplier(t.db, { id, name });
      await buildItemSource(t.db, id, flask.id, price);
    }
    const { call } = await clientOf('read');
    const { sources } = (await call('item_sources', { itemId: flask.id })).structuredContent as {
      sources: { supplierId: string; supplierName: string }[];
    };
    expect(sources.map((source) => [source.supplierId, source.supplierName])).toEqual([
      ['acme-2', 'Acme'],
      ['acme-1', 'Acme'],
      ['mid', 'Middleton'],
      ['zeta', 'Zeta Labs'],
    ]);
  });

  it('create_supplier and link_item_source write through the suppliers service with its rules', async () => {
    const { call } = await clientOf('write');
    const created = await call('create_supplier', { id: 'vwr', name: 'VWR', email: 'orders@vwr.example' });
    expect(created.isError).toBeFalsy();
    expect(await t.db('suppliers').where({ id: 'vwr' }).first()).toMatchObject({
      name: 'VWR',
      email: 'orders@vwr.example',
    });
    expect((await call('create_supplier', { id: 'vwr', name: 'VWR again' })).content[0].text).toMatch(
      /^MCP_CONFLICT: /,
    );

    const linked = await call('link_item_source', {
      supplierId: 'vwr',
      itemId: beaker.id,
      price: '4.20',
      supplierSku: 'VWR-BK250',
      preferred: true,
    });
    expect(linked.isError).toBeFalsy();
    expect(await t.db('item_sources').where({ supplier_id: 'vwr', item_id: beaker.id }).first()).toMatchObject({
      price: '4.20',
      supplier_sku: 'VWR-BK250',
      preferred: true,
    });
    expect(
      (await call('link_item_source', { supplierId: 'vwr', itemId: beaker.id, price: '4.00' })).content[0].text,
    ).toMatch(/^MCP_CONFLICT: /);
  });

  it("a write tool is refused when the key's creator no longer holds the route's role, and nothing is written", async () => {
    const demoted = await buildUser(t.db, { role: 'admin' });
    const { call } = await clientOf('write', demoted.id);
    await t.db('users').where({ id: demoted.id }).update({ role: 'user' });
    const refused = await call('create_supplier', { id: 'nope', name: 'Nope' });
    expect(refused.content[0].text).toBe(
      "MCP_FORBIDDEN: Creating suppliers need the manager role, which the key's creator no longer holds",
    );
    expect(await t.db('suppliers').where({ id: 'nope' }).first()).toBeUndefined();
  });
});

describe('purchase orders', () => {
  it('create_purchase_order, get_purchase_order, receive_purchase_order: stock in through the ledger, the receipt audited as the MCP key', async () => {
    const { call, keyId } = await clientOf('write');
    const created = await call('create_purchase_order', {
      supplierId,
      items: [
        { itemId: beaker.id, quantity: '10', unitCost: '4.50' },
        { name: 'Carriage', quantity: '1', unitCost: '6.00' },
      ],
    });
    expect(created.isError).toBeFalsy();
    const order = created.structuredContent.order as { id: number; orderId: string; items: { orderItemId: number }[] };
    expect(await t.db('orders').where({ id: order.id }).first()).toMatchObject({
      supplier_id: supplierId,
      status: 'pending',
      created_by: admin.id,
      total_amount: '51.00',
    });

    const read = await call('get_purchase_order', { orderId: order.orderId });
    expect(read.structuredContent.order).toMatchObject({
      id: order.id,
      status: 'pending',
      items: [expect.objectContaining({ itemId: beaker.id }), expect.objectContaining({ name: 'Carriage' })],
    });

    const before = Number(await stockOf(t.db, beaker.id));
    const received = await call('receive_purchase_order', {
      orderId: order.orderId,
      receivedItems: [{ orderItemId: order.items[0].orderItemId, receivedQuantity: '4' }],
    });
    expect(received.isError).toBeFalsy();
    expect(Number(await stockOf(t.db, beaker.id))).toBe(before + 4);
    expect((await movementsOf(t.db, beaker.id)).at(-1)).toMatchObject({
      type: 'in',
      quantity: '4.00',
      performed_by: admin.id,
    });
    expect(await t.db('orders').where({ id: order.id }).first()).toMatchObject({ status: 'partially_received' });
    expect(await auditOf('order', order.orderId)).toEqual([
      expect.objectContaining({ action: 'receive', ...mcpActor(keyId) }),
    ]);

    const tooMuch = await call('receive_purchase_order', {
      orderId: order.orderId,
      receivedItems: [{ orderItemId: order.items[0].orderItemId, receivedQuantity: '7' }],
    });
    expect(tooMuch.content[0].text).toMatch(/^MCP_INVALID_REQUEST: /);
    expect(Number(await stockOf(t.db, beaker.id))).toBe(before + 4);
  });
});

describe('replenishment', () => {
  it('replenishment_suggestions lists a short item under its source; create_replenishment_orders orders it once, audited as the MCP key', async () => {
    const flask = await buildStockedItem(t.db, 1, {
      name: 'Flask 1 l',
      sku: 'FL-1000',
      price: '12.50',
      minimumStock: 8,
    });
    await buildItemSource(t.db, supplierId, flask.id, '6.00');
    const { call, keyId } = await clientOf('write');
    const suggestions = await call('replenishment_suggestions');
    expect(suggestions.isError).toBeFalsy();
    expect(JSON.stringify(suggestions.structuredContent.suppliers)).toContain('FL-1000');

    const ordered = await call('create_replenishment_orders', { itemIds: [flask.id] });
    expect(ordered.isError).toBeFalsy();
    const [order] = ordered.structuredContent.orders as { id: number; orderId: string; supplierId: string }[];
    expect(order).toMatchObject({ supplierId });
    expect(await t.db('order_items').where({ order_id: order.id })).toEqual([
      expect.objectContaining({ item_id: flask.id, unit_cost: '6.00' }),
    ]);
    expect(await auditOf('order', order.orderId)).toEqual([
      expect.objectContaining({ action: 'create', ...mcpActor(keyId) }),
    ]);
    expect((await call('create_replenishment_orders', { itemIds: [flask.id] })).structuredContent.orders).toEqual([]);
  });
});

describe('sales and notes', () => {
  it('find_sales finds a sale by its number, its charge code and its recipient', async () => {
    const { body } = await clerk
      .post('/api/sales')
      .send({
        chargeCode: 'PHYS-001',
        items: [{ itemId: beaker.id, quantity: 1 }],
        recipient: { deliveredTo: 'Dr Grace Hopper' },
      })
      .expect(201);
    const sale = body.sale as { id: number; saleId: string };
    const { call } = await clientOf('read');
    for (const args of [{ search: sale.saleId }, { search: 'grace hop' }, { chargeCode: 'phys', search: 'BK-250' }]) {
      const found = await call('find_sales', args);
      expect(found.isError, JSON.stringify(args)).toBeFalsy();
      expect(
        (found.structuredContent.sales as { id: number }[]).map((s) => s.id),
        JSON.stringify(args),
      ).toContain(sale.id);
    }
    expect((await call('find_sales', { search: 'nobody-at-all' })).structuredContent).toMatchObject({
      sales: [],
      pagination: expect.objectContaining({ total: 0 }),
    });
  });

  it('find_quotes finds a draft quote by its number, its charge code and its customer notes', async () => {
    const saved = await clerk
      .post('/api/sales/quotes')
      .send({
        sessionId: 'mcp-find',
        chargeCode: 'PHYS-001',
        items: [{ itemId: beaker.id, quantity: 2 }],
        customerNotes: 'For Dr Ada Lovelace',
      })
      .expect(200);
    const quote = saved.body.quote as { id: number; quoteId: string };
    const { call } = await clientOf('read');
    for (const search of [quote.quoteId, quote.quoteId.slice(0, -1), 'ada love', 'phys-0']) {
      const found = await call('find_quotes', { search });
      expect(found.isError, search).toBeFalsy();
      expect(
        (found.structuredContent.quotes as { id: number }[]).map((q) => q.id),
        search,
      ).toContain(quote.id);
    }
    expect((await call('find_quotes', { search: 'nobody-at-all' })).structuredContent).toEqual({ quotes: [] });
  });

  it("add_note writes a note by the key's creator; list_notes reads it; an unknown record is refused", async () => {
    const { call } = await clientOf('write');
    const added = await call('add_note', {
      referenceType: 'item',
      referenceId: String(beaker.id),
      text: 'Reorder from VWR when Fisher is out',
    });
    expect(added.isError).toBeFalsy();
    expect(
      await t
        .db('notes')
        .where({ reference_type: 'item', reference_id: String(beaker.id) })
        .first(),
    ).toMatchObject({ text: 'Reorder from VWR when Fisher is out', created_by: admin.id });
    expect(
      (await call('list_notes', { referenceType: 'item', referenceId: String(beaker.id) })).structuredContent.notes,
    ).toEqual([expect.objectContaining({ text: 'Reorder from VWR when Fisher is out', createdBy: admin.id })]);
    expect(
      (await call('add_note', { referenceType: 'item', referenceId: '999999', text: 'x' })).content[0].text,
    ).toMatch(/^MCP_NOT_FOUND: /);
  });

  it("refund_sale: with the creator's refund permission, stock back and audited as the MCP key; without it, refused and nothing changes", async () => {
    const { body } = await clerk
      .post('/api/sales')
      .send({ chargeCode: 'PHYS-001', items: [{ itemId: beaker.id, quantity: 3 }] })
      .expect(201);
    const sale = body.sale as { id: number };
    const manager = await buildUser(t.db, { role: 'admin' });
    const withoutPermission = await clientOf('write', manager.id);
    await t.db('users').where({ id: manager.id }).update({ role: 'manager' });
    const stock = Number(await stockOf(t.db, beaker.id));
    const refused = await withoutPermission.call('refund_sale', {
      saleId: sale.id,
      items: [{ itemId: beaker.id, refundQty: 1 }],
    });
    expect(refused.content[0].text).toBe(
      "MCP_FORBIDDEN: Refunds need the sales.refund permission, which the key's creator does not hold",
    );
    expect(await t.db('sales').where({ id: sale.id }).first()).toMatchObject({ refunded_amount: '0.00' });

    await grantPermission(t.db, manager.id, 'sales.refund');
    expect(
      (await withoutPermission.call('refund_sale', { saleId: sale.id, items: [{ itemId: beaker.id, refundQty: 1 }] }))
        .isError,
    ).toBeFalsy();

    const { call, keyId } = await clientOf('write');
    const refunded = await call('refund_sale', {
      saleId: sale.id,
      items: [{ itemId: beaker.id, refundQty: 1 }],
      note: 'Cracked',
    });
    expect(refunded.isError).toBeFalsy();
    expect(refunded.structuredContent).toMatchObject({
      sale: { id: sale.id, status: 'partially_refunded' },
      refundedItems: [{ itemId: beaker.id, refundedQty: 1 }],
    });
    expect(Number(await stockOf(t.db, beaker.id))).toBe(stock + 2);
    expect((await auditOf('sale', sale.id)).at(-1)).toMatchObject({ action: 'refund', ...mcpActor(keyId) });
  });
});

/** The JSON of a resource's one text content. */
const jsonOf = (read: { contents: ({ text: string } | { blob: string })[] }) =>
  JSON.parse((read.contents[0] as { text: string }).text);

describe('resources and prompts', () => {
  it('stores://items/{sku}: the item in the API form, the SKU completing from what is typed; an unknown SKU is MCP_NOT_FOUND', async () => {
    const { client } = await clientOf('read');
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate).sort()).toEqual([
      'stores://items/{sku}',
      'stores://sales/{saleId}',
    ]);
    const read = await client.readResource({ uri: 'stores://items/BK-250' });
    expect(read.contents).toEqual([
      { uri: 'stores://items/BK-250', mimeType: 'application/json', text: expect.any(String) },
    ]);
    const row = await t.db('items').where({ id: beaker.id }).first();
    expect(jsonOf(read).item).toMatchObject({
      id: beaker.id,
      sku: 'BK-250',
      name: 'Beaker 250 ml',
      price: '10.00',
      currentStock: Number(row.current_stock),
    });
    await expect(client.readResource({ uri: 'stores://items/NOPE' })).rejects.toThrow(
      "MCP_NOT_FOUND: No item with SKU 'NOPE'",
    );
    const completed = await client.complete({
      ref: { type: 'ref/resource', uri: 'stores://items/{sku}' },
      argument: { name: 'sku', value: 'bk-2' },
    });
    expect(completed.completion.values).toContain('BK-250');
  });

  it('stores://sales/{saleId}: a sale by its number or id, with its lines; an unknown number is MCP_NOT_FOUND', async () => {
    const { body } = await clerk
      .post('/api/sales')
      .send({ chargeCode: 'PHYS-001', items: [{ itemId: beaker.id, quantity: 2 }] })
      .expect(201);
    const sale = body.sale as { id: number; saleId: string };
    const { client } = await clientOf('read');
    for (const ref of [sale.saleId, String(sale.id)]) {
      const read = await client.readResource({ uri: `stores://sales/${ref}` });
      expect(jsonOf(read).sale, ref).toMatchObject({
        id: sale.id,
        saleId: sale.saleId,
        chargeCode: 'PHYS-001',
        items: [expect.objectContaining({ itemId: beaker.id })],
      });
    }
    await expect(client.readResource({ uri: `stores://sales/${sale.saleId.slice(0, -1)}X` })).rejects.toThrow(
      /MCP_NOT_FOUND: No sale numbered/,
    );
    await expect(client.readResource({ uri: 'stores://sales/999999' })).rejects.toThrow(/MCP_NOT_FOUND/);
  });

  it('the two prompts: what to reorder this week, and a charge code explained, naming the tools to call', async () => {
    const { client } = await clientOf('read');
    expect((await client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual([
      'explain_charge_code_spending',
      'reorder_this_week',
    ]);
    const reorder = await client.getPrompt({ name: 'reorder_this_week' });
    expect(reorder.messages).toEqual([
      {
        role: 'user',
        content: {
          type: 'text',
          text: expect.stringMatching(/replenishment_suggestions.*list_low_stock.*create_replenishment_orders/s),
        },
      },
    ]);
    const explain = await client.getPrompt({ name: 'explain_charge_code_spending', arguments: { code: 'PHYS-001' } });
    const text = (explain.messages[0].content as { text: string }).text;
    expect(text).toMatch(/charge_code_status with code PHYS-001/);
    expect(text).toMatch(/sales_summary with chargeCode PHYS-001/);
    expect(text).toMatch(/find_sales with chargeCode PHYS-001/);
    await expect(client.getPrompt({ name: 'explain_charge_code_spending', arguments: {} })).rejects.toThrow(/code/);
  });
});
