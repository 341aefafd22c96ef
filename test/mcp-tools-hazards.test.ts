import type supertest from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { buildMcpKey, mcpTestServer, type McpTestServer } from './helpers/mcp-factories';
import { sdsPdf, yearsAgo } from './helpers/sds-factories';

// Issue 43: an assistant asks "what are the hazards of X and where is its SDS?" and "which hazardous
// items have no current SDS?" through the SDK's own client, under the API's roles.

let t: TestApp;
let mcp: McpTestServer;
let manager: { id: string; email: string };
let clerk: { id: string };
let managerAgent: supertest.Agent;
const ids = {} as Record<'ethanol' | 'bleach' | 'toluene', number>;

const hazard = (over: Record<string, unknown>) => ({
  signalWord: null,
  pictograms: [],
  hStatements: [],
  pStatements: [],
  casNumber: null,
  unNumber: null,
  storage: null,
  ...over,
});

async function uploadSds(itemId: number, revisionDate: string) {
  return (
    await managerAgent
      .post(`/api/items/${itemId}/sds`)
      .field('revisionDate', revisionDate)
      .attach('file', await sdsPdf(`Sheet ${itemId} ${revisionDate}`), {
        filename: 'sheet.pdf',
        contentType: 'application/pdf',
      })
      .expect(201)
  ).body;
}

beforeAll(async () => {
  t = await testApp();
  mcp = await mcpTestServer(t.app);
  manager = await buildUser(t.db, { role: 'manager' });
  clerk = await buildUser(t.db);
  managerAgent = await t.loginAs(manager);
  const category = await buildCategory(t.db);
  const create = async (body: Record<string, unknown>) =>
    (
      await managerAgent
        .post('/api/items')
        .send({ categoryId: category.id, price: '3.00', ...body })
        .expect(201)
    ).body.id as number;
  ids.ethanol = await create({
    name: 'Ethanol absolute',
    sku: 'MCPH-ETOH',
    currentStock: '6',
    hazard: hazard({
      signalWord: 'Danger',
      pictograms: ['GHS02'],
      hStatements: ['H225'],
      pStatements: ['P210', 'P303+P361+P353'],
      casNumber: '64-17-5',
      unNumber: '1170',
      storage: 'Flammables cabinet',
    }),
  });
  ids.bleach = await create({
    name: 'Sodium hypochlorite',
    sku: 'MCPH-BLEACH',
    currentStock: '2',
    hazard: hazard({ signalWord: 'Warning', pictograms: ['GHS05', 'GHS09'], hStatements: ['H314', 'H400'] }),
  });
  ids.toluene = await create({
    name: 'Toluene',
    sku: 'MCPH-TOL',
    currentStock: '0',
    hazard: hazard({ signalWord: 'Danger', pictograms: ['GHS02', 'GHS08'], hStatements: ['H225', 'H361d'] }),
  });
  await uploadSds(ids.ethanol, yearsAgo(7));
  await uploadSds(ids.ethanol, yearsAgo(0, 30));
  await uploadSds(ids.bleach, yearsAgo(6));
});
afterEach(() => mcp?.closeClients());
afterAll(async () => {
  await mcp?.close();
  await t?.close();
});

async function clientOf(creator: string) {
  const key = await buildMcpKey(t.db, { name: 'Safety bot', scopes: ['read'], createdBy: creator });
  return mcp.connect(key.key, { listTools: false });
}

type RegisterItem = { sku: string; sds: { state: string; revisionDate: string | null } };
const ours = (items: RegisterItem[]) => items.filter((item) => item.sku.startsWith('MCPH-'));

describe('the hazard tools', () => {
  it("get_item_hazards: the hazards with the statements' texts and the SDS versions, newest first, for any key", async () => {
    const { client, call } = await clientOf(clerk.id);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['get_item_hazards', 'list_hazardous_items']),
    );
    const result = await call('get_item_hazards', { sku: 'MCPH-ETOH' });
    expect(result.isError).toBeFalsy();
    const api = await managerAgent.get(`/api/items/${ids.ethanol}/sds`).expect(200);
    expect(result.structuredContent).toEqual({
      item: { id: ids.ethanol, sku: 'MCPH-ETOH', name: 'Ethanol absolute' },
      hazardous: true,
      hazard: {
        signalWord: 'Danger',
        pictograms: [{ code: 'GHS02', name: expect.stringMatching(/flammable/i) }],
        hStatements: [{ code: 'H225', text: 'Highly flammable liquid and vapour' }],
        pStatements: [
          { code: 'P210', text: expect.stringMatching(/^Keep away from heat/) },
          { code: 'P303+P361+P353', text: expect.stringMatching(/^IF ON SKIN \(or hair\)/) },
        ],
        casNumber: '64-17-5',
        unNumber: '1170',
        storage: 'Flammables cabinet',
      },
      safetyDataSheets: api.body,
      currentSdsPath: `/items/${ids.ethanol}/sds`,
    });
    const sheets = result.structuredContent.safetyDataSheets as { revisionDate: string; current: boolean }[];
    expect(sheets.map((s) => [s.revisionDate, s.current])).toEqual([
      [yearsAgo(0, 30), true],
      [yearsAgo(7), false],
    ]);

    const none = await call('get_item_hazards', { itemId: ids.toluene });
    expect(none.structuredContent).toMatchObject({ hazardous: true, safetyDataSheets: [], currentSdsPath: null });
    expect((await call('get_item_hazards', { sku: 'NOPE-1' })).content[0].text).toBe(
      "MCP_NOT_FOUND: No item with SKU 'NOPE-1'",
    );
  });

  it("list_hazardous_items: the register as the API answers it, and the items without a current SDS, for a manager's key only", async () => {
    const { call } = await clientOf(manager.id);
    const register = await call('list_hazardous_items');
    expect(register.isError).toBeFalsy();
    const api = await managerAgent.get('/api/reports/hazards').expect(200);
    expect({ ...register.structuredContent, generatedAt: null }).toEqual({ ...api.body, generatedAt: null });
    expect(ours(register.structuredContent.items as RegisterItem[]).map((i) => i.sku)).toEqual([
      'MCPH-BLEACH',
      'MCPH-ETOH',
    ]);

    // which hazardous items have no current SDS? toluene holds no stock but is counted, as the alert counts it
    const due = await call('list_hazardous_items', { sds: 'due', includeWithoutStock: true });
    expect(
      ours(due.structuredContent.items as RegisterItem[]).map((i) => [i.sku, i.sds.state, i.sds.revisionDate]),
    ).toEqual([
      ['MCPH-BLEACH', 'old', yearsAgo(6)],
      ['MCPH-TOL', 'missing', null],
    ]);
    const inStock = await call('list_hazardous_items', { sds: 'due' });
    expect(ours(inStock.structuredContent.items as RegisterItem[]).map((i) => i.sku)).toEqual(['MCPH-BLEACH']);

    const clerkKey = await clientOf(clerk.id);
    const refused = await clerkKey.call('list_hazardous_items', {});
    expect(refused.isError).toBe(true);
    expect(refused.content[0].text).toMatch(/^MCP_FORBIDDEN: Hazard register reads need the manager role/);
  });
});
