import fs from 'node:fs/promises';
import path from 'node:path';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USERS } from '../seeds/01_users';
import { runSeeds } from '../src/db/seed';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t?.close());

describe('seeds/01_users.ts', () => {
  it('creates the demo manager and user through knex seeds, and a second run adds nothing', async () => {
    const run = () => runSeeds(t.db, '01_users.ts');
    await run();
    await run();
    for (const demo of DEMO_USERS) {
      expect(await t.db('users').where({ email: demo.email })).toEqual([
        expect.objectContaining({ role: demo.role, is_active: true }),
      ]);
      await t.request.post('/api/auth/login').send({ email: demo.email, password: demo.password }).expect(200);
    }
  });
});

describe("the README's demo data at the counter", () => {
  it('every SKU it lists sells on every charge code it says sells (the PIN once PINs are required); the refused code is refused with its hold', async () => {
    const readme = await fs.readFile(path.join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const row = (label: string) => new RegExp(`^\\| ${label} \\|(.*)\\|$`, 'm').exec(readme)![1];
    const ticked = (text: string) =>
      [...text.matchAll(/`([A-Z0-9-]+)`(?: \(PIN `(\d+)`)?/g)].map((m) => ({ value: m[1], pin: m[2] }));
    const skus = ticked(row('SKUs')).map((m) => m.value);
    const selling = ticked(row('Charge codes that sell'));
    const refused = ticked(row('A charge code that is refused')).map((m) => m.value);
    expect(skus.length).toBeGreaterThan(3);
    expect(selling.map((c) => c.value)).toEqual(['CHEM-2026-001', 'PHYS-2026-014', 'BIO-2025-077']);
    expect(selling.find((c) => c.pin)).toEqual({ value: 'CHEM-2026-001', pin: '1234' });

    await runSeeds(t.db);
    const clerk = DEMO_USERS.find((u) => u.role === 'user')!;
    const counter = supertest.agent(t.app);
    await counter.post('/api/auth/login').send({ email: clerk.email, password: clerk.password }).expect(200);
    const items = await t.db('items').whereIn('sku', skus).select('id', 'sku');
    expect(items.map((i) => i.sku).sort()).toEqual([...skus].sort());
    const basket = items.map((i) => ({ itemId: i.id, quantity: 1 }));

    for (const { value } of selling) {
      const res = await counter.post('/api/sales').send({ chargeCode: value, items: basket });
      expect(res.status, `${value}: ${JSON.stringify(res.body)}`).toBe(201);
    }
    for (const code of refused) {
      const res = await counter.post('/api/sales').send({ chargeCode: code, items: basket });
      expect(res.status, code).toBeGreaterThanOrEqual(400);
      expect(JSON.stringify(res.body)).toContain('Budget under review by finance');
    }

    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    await admin
      .put('/api/settings/chargeCodes.requirePin')
      .send({ value: { enabled: true } })
      .expect(200);
    for (const { value, pin } of selling) {
      const res = await counter.post('/api/sales').send({ chargeCode: value, items: basket, ...(pin ? { pin } : {}) });
      expect(res.status, `${value}: ${JSON.stringify(res.body)}`).toBe(201);
    }
  });
});
