import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSeeds } from '../src/db/seed';
import { testApp, type TestApp } from './helpers/app';
import { agentsByRole, type Agents } from './helpers/inventory-factories';

let t: TestApp;
let as: Agents;
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
});
afterAll(() => t.close());

describe('seeds/02_inventory.ts', () => {
  it('loads categories, VAT rates and 30 items whose stock the ledger explains; a second run adds nothing', async () => {
    await runSeeds(t.db, '02_inventory.ts');
    await runSeeds(t.db, '02_inventory.ts');
    expect(await t.db('categories')).toHaveLength(5);
    expect((await t.db('vat_rates').orderBy('rate', 'desc')).map((r) => [r.name, r.rate, r.is_default])).toEqual([
      ['Standard', '0.2000', true],
      ['Reduced', '0.0500', false],
      ['Zero', '0.0000', false],
    ]);
    const list = await as.user.get('/api/items?limit=100').expect(200);
    expect(list.body.total).toBe(30);
    // issue 43: the demo chemicals carry their hazard data
    const hazardous = (list.body.items as { sku: string; hazard: { pictograms: string[] } | null }[])
      .filter((item) => item.hazard !== null)
      .map((item) => [item.sku, item.hazard!.pictograms]);
    expect(hazardous.sort()).toEqual([
      ['CHM-ACE-1', ['GHS02', 'GHS07']],
      ['CHM-ETH-25', ['GHS02', 'GHS07']],
      ['CHM-HCL-1M', ['GHS05']],
    ]);
    const alerts = await as.user.get('/api/system/alerts').expect(200);
    expect(alerts.body.alerts.map((a: { type: string }) => a.type)).not.toContain('stock_ledger_mismatch');
  });
});
