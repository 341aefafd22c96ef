import type supertest from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { buildMcpKey, mcpTestServer, type McpTestServer } from './helpers/mcp-factories';
import { buildChargeCode } from './helpers/sales-factories';
import { day, stockInLot } from './helpers/lots-factories';

// Issue 42: an assistant asks which lots expire, who got a lot, and quarantines one for a manager,
// through the SDK's own client; the same service, rules and messages as the API.

let t: TestApp;
let mcp: McpTestServer;
let manager: { id: string; email: string };
let managerAgent: supertest.Agent;
let clerk: { id: string };
let item: { id: number; sku: string; name: string };
let code: string;

beforeAll(async () => {
  t = await testApp();
  mcp = await mcpTestServer(t.app);
  manager = await buildUser(t.db, { role: 'manager' });
  clerk = await buildUser(t.db);
  managerAgent = await t.loginAs(manager);
  code = (await buildChargeCode(t.db)).code;
  const category = await buildCategory(t.db);
  const created = await managerAgent
    .post('/api/items')
    .send({ name: 'Tris buffer', sku: 'TRIS-1', categoryId: category.id, price: '4.00', tracking: 'lot' })
    .expect(201);
  item = { id: created.body.id, sku: 'TRIS-1', name: 'Tris buffer' };
  for (const [lotNumber, quantity, expiresOn] of [
    ['T-SOON', 3, day(7)],
    ['T-OLD', 2, day(-3)],
    ['T-LATE', 5, day(200)],
  ] as const) {
    await stockInLot(managerAgent, item.id, lotNumber, quantity, expiresOn).expect(200);
  }
});
afterEach(() => mcp?.closeClients());
afterAll(async () => {
  await mcp?.close();
  await t?.close();
});

async function clientOf(scope: 'read' | 'write', creator: string) {
  const key = await buildMcpKey(t.db, {
    name: 'Lab bot',
    scopes: scope === 'write' ? ['read', 'write'] : ['read'],
    createdBy: creator,
  });
  return { ...(await mcp.connect(key.key)), keyId: key.id };
}

const lotId = async (lotNumber: string): Promise<number> =>
  (await t.db('stock_lots').where({ item_id: item.id, lot_number: lotNumber }).first('id')).id;

describe('the lots tools', () => {
  it('list_lots: the expiring lots of an item by SKU, as GET /api/lots answers', async () => {
    const { call } = await clientOf('read', clerk.id);
    const expiring = await call('list_lots', { sku: 'TRIS-1', status: 'expiring' });
    expect(expiring.isError).toBeFalsy();
    const api = await managerAgent.get(`/api/lots?itemId=${item.id}&status=expiring`).expect(200);
    expect(expiring.structuredContent).toEqual(api.body);
    expect((expiring.structuredContent.lots as { lotNumber: string }[]).map((l) => l.lotNumber)).toEqual(['T-SOON']);
    const all = await call('list_lots', { itemId: item.id });
    expect((all.structuredContent.lots as { lotNumber: string }[]).map((l) => l.lotNumber)).toEqual([
      'T-OLD',
      'T-SOON',
    ]);
    expect((await call('list_lots', { sku: 'NOPE-1' })).content[0].text).toBe(
      "MCP_NOT_FOUND: No item with SKU 'NOPE-1'",
    );
  });

  it("trace_lot: who got the lot, for a manager's key only", async () => {
    const sale = await managerAgent
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 2 }], vatApplied: false })
      .expect(201);
    const id = await lotId('T-SOON');
    const { call } = await clientOf('read', manager.id);
    const trace = await call('trace_lot', { lotId: id });
    expect(trace.isError).toBeFalsy();
    expect(trace.structuredContent).toEqual((await managerAgent.get(`/api/lots/${id}/trace`).expect(200)).body);
    expect(trace.structuredContent.sales).toEqual([
      expect.objectContaining({ saleNumber: sale.body.sale.saleId, chargeCode: code, quantity: 2 }),
    ]);
    expect((await call('trace_lot', { lotId: 999999 })).content[0].text).toBe('MCP_NOT_FOUND: Lot not found');

    const clerkKey = await clientOf('read', clerk.id);
    const refused = await clerkKey.call('trace_lot', { lotId: id });
    expect(refused.isError).toBe(true);
    expect(refused.content[0].text).toMatch(/^MCP_FORBIDDEN: Lot traces need the manager role/);
  });

  it("quarantine_lot: a manager's write key holds the lot back, audited as the key; 409 twice, as the API", async () => {
    const id = await lotId('T-LATE');
    const readOnly = await clientOf('read', manager.id);
    expect((await readOnly.client.listTools()).tools.map((tool) => tool.name)).not.toContain('quarantine_lot');

    const clerkKey = await clientOf('write', clerk.id);
    const refused = await clerkKey.call('quarantine_lot', { lotId: id, reason: 'Suspect' });
    expect(refused.content[0].text).toMatch(/^MCP_FORBIDDEN: Quarantining lots need the manager role/);
    expect((await t.db('stock_lots').where({ id }).first()).quarantined_at).toBeNull();

    const { call, keyId } = await clientOf('write', manager.id);
    const held = await call('quarantine_lot', { lotId: id, reason: 'Supplier recall notice' });
    expect(held.isError).toBeFalsy();
    expect(held.structuredContent.lot).toMatchObject({
      id,
      lotNumber: 'T-LATE',
      status: 'quarantined',
      quarantineReason: 'Supplier recall notice',
    });
    const [audit] = await t.db('audit_log').where({ entity_type: 'lot', entity_id: String(id), action: 'quarantine' });
    expect(audit).toMatchObject({ actor_kind: 'mcp-key', actor_user_id: manager.id, actor_mcp_key_id: keyId });

    const again = await call('quarantine_lot', { lotId: id, reason: 'Twice' });
    expect(again.content[0].text).toBe('MCP_CONFLICT: Lot T-LATE of TRIS-1 is quarantined already');
    const invalid = await call('quarantine_lot', { lotId: id, reason: '' });
    expect(invalid.isError).toBe(true);
  });
});
