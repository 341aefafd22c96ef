import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type supertest from 'supertest';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';
import { buildStockedItem } from './helpers/inventory-factories';
import { JOBS } from '../src/jobs/scheduler';
import type { UserRow } from '../src/modules/users/users.service';

// Issue 39, item 7: a requester's unsubmitted basket is kept in PostgreSQL, per person, so it follows
// them from one sign-in (a phone) to another (a desktop); untouched for 30 days it is empty, and purged.

let t: TestApp;

beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

/** The page's CSRF token (each form carries it). */
async function csrfOf(agent: supertest.Agent): Promise<string> {
  const page = await agent.get('/catalogue').expect(200);
  return /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
}

/** The names in the catalogue's basket, as the person's page shows it. */
async function basketOf(agent: supertest.Agent): Promise<string[]> {
  const page = await agent.get('/catalogue').expect(200);
  const list = /<ul class="basket-lines"[^>]*>([\s\S]*?)<\/ul>/.exec(page.text)?.[1] ?? '';
  return [...list.matchAll(/<div class="basket-line-name">([^<]+?) <span/g)].map((m) => m[1]);
}

/** Adds an item to the person's basket as the catalogue's form does (post/redirect/get): 303. */
async function add(agent: supertest.Agent, itemId: number, quantity: number): Promise<void> {
  await agent
    .post('/catalogue/basket/add')
    .type('form')
    .send({ _csrf: await csrfOf(agent), itemId, quantity, returnTo: '/catalogue' })
    .expect(303);
}

async function signedInTwice(): Promise<[UserRow, supertest.Agent, supertest.Agent]> {
  const requester = await buildUser(t.db, { role: 'requester' });
  // two sign-ins, as on a phone and then a desktop: two sessions
  const phone = await t.loginAs(requester);
  const desktop = await t.loginAs(requester);
  return [requester, phone, desktop];
}

describe('the request basket', () => {
  it('303 follows the requester from one sign-in to another; another person’s basket is their own', async () => {
    const [requester, phone, desktop] = await signedInTwice();
    const beakers = await buildStockedItem(t.db, 40, { name: 'Beaker 250 ml', price: '3.20' });
    const flasks = await buildStockedItem(t.db, 10, { name: 'Conical flask', price: '6.75' });

    await add(phone, beakers.id, 2);
    expect(await basketOf(desktop)).toEqual(['Beaker 250 ml']);
    await add(desktop, flasks.id, 1);
    await add(desktop, beakers.id, 1);
    expect(await basketOf(phone)).toEqual(['Beaker 250 ml', 'Conical flask']);
    const row = await t.db('request_baskets').where({ user_id: requester.id }).first();
    expect(row.lines).toEqual([
      expect.objectContaining({ itemId: beakers.id, quantity: '3' }),
      expect.objectContaining({ itemId: flasks.id, quantity: '1' }),
    ]);
    // the phone removes a line: the desktop sees it gone
    await phone
      .post(`/catalogue/basket/lines/${flasks.id}`)
      .type('form')
      .send({ _csrf: await csrfOf(phone), action: 'remove' })
      .expect(303);
    expect(await basketOf(desktop)).toEqual(['Beaker 250 ml']);

    // a sign-out and a new sign-in keep it
    const phoneCsrf = await csrfOf(phone);
    await phone.post('/logout').type('form').send({ _csrf: phoneCsrf }).expect(303);
    expect(await basketOf(await t.loginAs(requester))).toEqual(['Beaker 250 ml']);

    // someone else starts with their own, empty basket
    expect(await basketOf(await t.loginAs(await buildUser(t.db, { role: 'requester' })))).toEqual([]);
  });

  it('303 submitted from one sign-in, the basket is empty on the other', async () => {
    const [requester, phone, desktop] = await signedInTwice();
    const code = await buildChargeCode(t.db, { authorisedEmails: [requester.email] });
    const gloves = await buildStockedItem(t.db, 40, { name: 'Nitrile gloves', price: '1.50' });
    await add(phone, gloves.id, 4);
    const submitted = await desktop
      .post('/catalogue/basket/submit')
      .type('form')
      .send({ _csrf: await csrfOf(desktop), chargeCode: code.code, notes: 'For Tuesday', neededBy: '' })
      .expect(303);
    expect(submitted.headers.location).toMatch(/^\/requests\/\d+$/);
    expect(await t.db('stock_requests').where({ requested_by: requester.id })).toHaveLength(1);
    expect(await basketOf(phone)).toEqual([]);
    expect(await t.db('request_baskets').where({ user_id: requester.id })).toEqual([]);
  });

  it('a basket untouched for 30 days is empty on the next read, and the prune job deletes it; a younger one stays', async () => {
    const [stale, staleAgent] = await signedInTwice();
    const [fresh, freshAgent] = await signedInTwice();
    const item = await buildStockedItem(t.db, 40, { name: 'Pipette tips' });
    await add(staleAgent, item.id, 1);
    await add(freshAgent, item.id, 1);
    await t
      .db('request_baskets')
      .where({ user_id: stale.id })
      .update({ updated_at: t.db.raw(`now() - interval '30 days 1 minute'`) });
    await t
      .db('request_baskets')
      .where({ user_id: fresh.id })
      .update({ updated_at: t.db.raw(`now() - interval '29 days'`) });

    expect(await basketOf(staleAgent)).toEqual([]);
    expect(await basketOf(freshAgent)).toEqual(['Pipette tips']);

    await JOBS.find((job) => job.name === 'prune-expired-baskets')!.run(t.db);
    expect(await t.db('request_baskets').where({ user_id: stale.id })).toEqual([]);
    expect(await t.db('request_baskets').where({ user_id: fresh.id })).toHaveLength(1);

    // an expired basket changed starts again from empty
    await t
      .db('request_baskets')
      .where({ user_id: fresh.id })
      .update({ updated_at: t.db.raw(`now() - interval '31 days'`) });
    const other = await buildStockedItem(t.db, 40, { name: 'Petri dish' });
    await add(freshAgent, other.id, 1);
    expect(await basketOf(freshAgent)).toEqual(['Petri dish']);
  });
});
