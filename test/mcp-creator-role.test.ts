import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type supertest from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { buildStockedItem } from './helpers/inventory-factories';
import { buildMcpKey, withKey } from './helpers/mcp-factories';
import { buildOrder, buildSupplier } from './helpers/purchasing-factories';
import { buildChargeCode } from './helpers/sales-factories';

/**
 * Issue 40, finding 2: a key's authority is the smaller of its scope and its creator's current role
 * and permissions, read on every call; a deactivated or deleted creator's key is not a key. The same
 * for API tokens.
 */

let t: TestApp;
let httpServer: http.Server;
let mcpUrl: URL;
let admin: supertest.Agent;
let clients: Client[] = [];
let item: { id: number; sku: string };
let saleNumber: string;
let supplierId: string;
let orderId: string;
const CODE = 'ROLE-001';

beforeAll(async () => {
  t = await testApp();
  httpServer = http.createServer(t.app);
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  mcpUrl = new URL(`http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`);
  admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
  item = await buildStockedItem(t.db, 50, { name: 'Pipette tips', sku: 'PT-100', price: '3.00' });
  await buildChargeCode(t.db, { code: CODE });
  const sale = await admin
    .post('/api/sales')
    .send({ chargeCode: CODE, items: [{ itemId: item.id, quantity: 1 }] })
    .expect(201);
  saleNumber = sale.body.sale.saleId;
  supplierId = (await buildSupplier(t.db, { name: 'Role Supplies' })).id;
  orderId = (
    await buildOrder(t.db, supplierId, [{ itemId: item.id, name: 'Pipette tips', quantity: '5', unitCost: '1.00' }])
  ).order.order_id;
});
afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  clients = [];
});
afterAll(async () => {
  await new Promise((resolve) => httpServer.close(resolve));
  await t.close();
});

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'stores-role-test', version: '1.0.0' });
  clients.push(client);
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: withKey(key) } }));
  return client;
}

/** What the tools a demoted creator must lose are called with: reads of stock, movements, sales, suppliers and orders; notes and draft quotes. */
const calls = () =>
  [
    ['search_items', { search: 'Pipette' }],
    ['get_item', { sku: item.sku }],
    ['stock_movements', { sku: item.sku }],
    ['check_stock', { lines: [{ sku: item.sku, quantity: 1 }] }],
    ['find_sales', { search: saleNumber }],
    ['sales_summary', {}],
    ['list_suppliers', {}],
    ['get_supplier', { supplierId }],
    ['get_purchase_order', { orderId }],
    ['list_notes', { referenceType: 'item', referenceId: String(item.id) }],
    ['add_note', { referenceType: 'item', referenceId: String(item.id), text: 'from the key' }],
    ['create_draft_quote', { chargeCode: CODE, lines: [{ sku: item.sku, quantity: 1 }] }],
  ] as const;

const counts = async () => ({
  notes: Number((await t.db('notes').count<{ n: string }[]>('* as n'))[0].n),
  quotes: Number((await t.db('quotes').count<{ n: string }[]>('* as n'))[0].n),
});

const post = (key: string, body: unknown) =>
  fetch(mcpUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...withKey(key) },
    body: JSON.stringify(body),
  });
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;
const toolsList = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

describe('an MCP key follows its creator', () => {
  it('an admin demoted to requester: the key, connected before, can no longer read or write; the REST API agrees (403 MCP_FORBIDDEN)', async () => {
    const creator = await buildUser(t.db, { role: 'admin' });
    const { key } = await buildMcpKey(t.db, { scopes: ['read', 'write'], createdBy: creator.id });
    const client = await connect(key);
    // while an admin, every call answers
    for (const [name, args] of calls()) {
      const result = await client.callTool({ name, arguments: args });
      expect([name, result.isError]).toEqual([name, undefined]);
    }
    const before = await counts();

    await admin.put(`/api/users/${creator.id}/role`).send({ role: 'requester' }).expect(200);
    for (const [name, args] of calls())
      await expect(client.callTool({ name, arguments: args }), name).rejects.toThrow(/403|MCP_FORBIDDEN/);
    expect(await counts()).toEqual(before);

    const refused = await post(key, toolsList);
    expect(refused.status).toBe(403);
    expect(await errorOf(refused)).toMatchObject({
      code: 'MCP_FORBIDDEN',
      message: expect.stringContaining('requester'),
    });
    for (const path of ['/api/mcp/inventory', '/api/mcp/sales', '/api/mcp/charge-code-analytics', '/api/mcp/status']) {
      const res = await t.request.get(path).set(withKey(key));
      expect([path, res.status, res.body.error?.code]).toEqual([path, 403, 'MCP_FORBIDDEN']);
    }

    // promoted back to user: the staff reads and notes come back, the manager's tools stay refused
    await admin.put(`/api/users/${creator.id}/role`).send({ role: 'user' }).expect(200);
    const again = await connect(key);
    expect((await again.callTool({ name: 'search_items', arguments: { search: 'Pipette' } })).isError).toBeUndefined();
    const stock = await again.callTool({
      name: 'record_stock_change',
      arguments: { sku: item.sku, type: 'in', quantity: 1, reason: 'count' },
    });
    expect(stock).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/^MCP_FORBIDDEN: /) }] });
  });

  it('a deactivated creator: MCP_AUTH_INVALID, at once, for a client already connected too', async () => {
    const creator = await buildUser(t.db, { role: 'admin' });
    const { key } = await buildMcpKey(t.db, { scopes: ['read', 'write'], createdBy: creator.id });
    const client = await connect(key);
    await admin.delete(`/api/users/${creator.id}`).expect(204);
    await expect(client.callTool({ name: 'search_items', arguments: { search: 'Pipette' } })).rejects.toThrow();
    const res = await post(key, toolsList);
    expect(res.status).toBe(401);
    expect((await errorOf(res)).code).toBe('MCP_AUTH_INVALID');
    const data = await t.request.get('/api/mcp/inventory').set(withKey(key)).expect(401);
    expect(data.body.error.code).toBe('MCP_AUTH_INVALID');
  });

  it('a deleted creator: the key is gone with them (MCP_AUTH_INVALID)', async () => {
    const creator = await buildUser(t.db, { role: 'admin' });
    const { key, id } = await buildMcpKey(t.db, { createdBy: creator.id });
    await admin.delete(`/api/users/${creator.id}/safe`).expect(204);
    expect(await t.db('mcp_api_keys').where({ id }).first()).toBeUndefined();
    const res = await post(key, toolsList);
    expect(res.status).toBe(401);
    expect((await errorOf(res)).code).toBe('MCP_AUTH_INVALID');
  });
});

describe('an API token follows its owner (it already did: checked here)', () => {
  it("a demoted admin's token loses the admin routes at once, a requester's token the staff ones; a deactivated owner's token is 401", async () => {
    const owner = await buildUser(t.db, { role: 'admin' });
    const session = await t.loginAs(owner);
    const { token } = (await session.post('/api/auth/tokens').send({ name: 'cli' }).expect(201)).body as {
      token: string;
    };
    const bearer = { Authorization: `Bearer ${token}` };
    await t.request.get('/api/users').set(bearer).expect(200);
    await admin.put(`/api/users/${owner.id}/role`).send({ role: 'user' }).expect(200);
    await t.request.get('/api/users').set(bearer).expect(403);
    await t.request.get(`/api/items/${item.id}/stock-movements`).set(bearer).expect(200);
    await admin.put(`/api/users/${owner.id}/role`).send({ role: 'requester' }).expect(200);
    await t.request.get(`/api/items/${item.id}/stock-movements`).set(bearer).expect(403);
    await t.request.get('/api/sales').set(bearer).expect(403);
    await admin.delete(`/api/users/${owner.id}`).expect(204);
    await t.request.get('/api/auth/user').set(bearer).expect(401);
  });
});
