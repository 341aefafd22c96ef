import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { hasRole } from '../../src/auth/guards';
import type { Role } from '../../src/auth/roles';
import type { UserRow } from '../../src/modules/users/users.service';
import { PHONE, screenshot, useBrowserApp } from '../helpers/browser';
import { buildCategory, buildUser } from '../helpers/factories';
import { sell } from '../helpers/finance-factories';
import { buildStockedItem } from '../helpers/inventory-factories';
import { buildMcpKey } from '../helpers/mcp-factories';
import { pageRoutesOf, type PageRoute } from '../helpers/page-routes';
import { buildOrder, buildSupplier } from '../helpers/purchasing-factories';
import { buildChargeCode } from '../helpers/sales-factories';

/**
 * Every page a manager and an admin can open, at a phone's 390 px: none scrolls sideways (a wide
 * table scrolls inside its own box). The pages are the page routes (the authorization matrix's
 * walk of the router), their parameters filled from records made here, so a new page is covered.
 */
const b = useBrowserApp({ OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: '127.0.0.1' });

/** Routes that answer htmx with a part of a page (a list of matches, a scan's line), not a page. */
const FRAGMENTS = new Set([
  '/counter/matches',
  '/orders/item-search',
  '/suppliers/:id/item-matches',
  '/orders/:id/receive/lookup',
]);

/** Routes that answer with a file, not a page: the item's safety data sheet, which a label's QR code opens (issue 43). */
const FILES = new Set(['/items/:id/sds']);

/** A path parameter's value, by the area it is in and its name: the records made below. */
let params: Record<string, string>;
let manager: UserRow;
let admin: UserRow;

beforeAll(async () => {
  [manager, admin] = await Promise.all([
    buildUser(b.t.db, { role: 'manager' }),
    buildUser(b.t.db, { role: 'admin', firstName: 'Alexandra', lastName: 'Administrator-Longname' }),
  ]);
  const requester = await buildUser(b.t.db, { role: 'requester' });
  const [asAdmin, asRequester] = await Promise.all([b.t.loginAs(admin), b.t.loginAs(requester)]);
  // long names and codes, as real ones are
  const category = await buildCategory(b.t.db, { name: 'Volumetric glassware and calibration standards' });
  const item = await buildStockedItem(b.t.db, 500, {
    name: 'Borosilicate glass volumetric flask, class A, 250 ml, with PTFE stopper',
    sku: 'GLS-VF-250-A-BORO-PTFE',
    price: '1234.56',
    categoryId: category.id,
  });
  const code = await buildChargeCode(b.t.db, {
    code: 'CHEM-2026-ANALYTICAL-001',
    title: 'Analytical chemistry teaching laboratory consumables',
    authorisedEmails: [requester.email],
  });
  const supplier = await buildSupplier(b.t.db, { name: 'Laboratory Glassware and Scientific Supplies Ltd' });
  const { order } = await buildOrder(b.t.db, supplier.id, [
    { itemId: item.id, name: item.name, quantity: '12', unitCost: '987.65' },
  ]);
  const sale = await sell(asAdmin, code.code, [{ itemId: item.id, quantity: 2 }]);
  const stocktake = (
    await asAdmin
      .post('/api/stocktakes')
      .send({ scope: { itemIds: [item.id] } })
      .expect(201)
  ).body;
  const request = (
    await asRequester
      .post('/api/requests')
      .send({ chargeCode: code.code, items: [{ itemId: item.id, quantity: 1 }] })
      .expect(201)
  ).body;
  const batch = (await asAdmin.post('/api/finance/recharge-batches').send({ to: new Date().toISOString() }).expect(201))
    .body;
  const backup = (await asAdmin.post('/api/backups').expect(201)).body;
  const archive = (
    await asAdmin
      .post('/api/archives/create')
      .send({ ageThresholdDays: 30, includeRecordTypes: ['sales'] })
      .expect(201)
  ).body;
  const webhook = (
    await asAdmin
      .post('/api/outbound-webhooks')
      .send({ url: 'http://127.0.0.1:9/stores-events', events: ['sale.created'], description: 'Finance system' })
      .expect(201)
  ).body;
  const tracked = (
    await asAdmin
      .post('/api/items')
      .send({
        name: 'Acetonitrile, HPLC gradient grade, 2.5 litre amber glass bottle',
        sku: 'SOL-ACN-HPLC-2500-AMBER',
        categoryId: category.id,
        price: '86.40',
        tracking: 'lot',
        currentStock: 6,
      })
      .expect(201)
  ).body;
  const [lot] = (await asAdmin.get(`/api/items/${tracked.id}/lots`).expect(200)).body;
  const mcpKey = await buildMcpKey(b.t.db, { createdBy: admin.id, name: 'Teaching laboratory assistant' });
  const vatRate = await b.t.db('vat_rates').first();
  params = {
    'items:id': String(item.id),
    'requests:id': String(request.id),
    'sales:id': String(sale.id),
    'stocktakes:id': String(stocktake.id),
    'suppliers:id': supplier.id,
    'orders:id': String(order.id),
    'chargecodes:code': code.code,
    'finance:batch': batch.batch?.number ?? batch.number,
    'users:id': manager.id,
    'settings:rateId': String(vatRate.id),
    'settings:id': String(mcpKey.id),
    'backups:filename': backup.filename,
    'archives:id': String(archive.id),
    'outbound-webhooks:id': webhook.id,
    'lots:id': String(lot.id),
  };
});

/** The route's path with its parameters filled in. */
function urlOf(route: PageRoute): string {
  const area = route.path.split('/')[1];
  return route.path.replace(/:(\w+)/g, (_, name: string) => {
    const value = params[`${area}:${name}`];
    if (value === undefined) throw new Error(`no record made for ${route.path}'s :${name}`);
    return encodeURIComponent(value);
  });
}

/** The GET page routes this role may open (finance.export is held by admins only among these two). */
function pagesFor(role: Role): PageRoute[] {
  const person = { role } as Express.User;
  return pageRoutesOf(b.t.app).filter(
    (route) =>
      route.method === 'GET' &&
      !FRAGMENTS.has(route.path) &&
      !FILES.has(route.path) &&
      (route.access === undefined || ('role' in route.access ? hasRole(person, route.access.role) : role === 'admin')),
  );
}

/** How wide the page is against the screen, and the outermost shown element that sticks out (to say what to fix). */
const widthOf = (page: Page) =>
  page.evaluate(`(() => {
    const root = document.documentElement;
    const describe = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
    const clipped = (el) => { for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) if (getComputedStyle(up).overflowX !== 'visible') return true; return false; };
    const out = (el) => el.checkVisibility() && el.getBoundingClientRect().right > root.clientWidth + 0.5 && !clipped(el);
    const outermost = [...document.querySelectorAll('body *')].find((el) => out(el) && !(el.parentElement && el.parentElement !== document.body && out(el.parentElement)));
    return { scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, widest: outermost ? describe(outermost) : null };
  })()`) as Promise<{ scrollWidth: number; clientWidth: number; widest: string | null }>;

describe('every page at 390 px', () => {
  for (const role of ['manager', 'admin'] as const) {
    it(`200 no page a ${role} can open scrolls sideways`, { timeout: 600_000 }, async () => {
      const pages = pagesFor(role);
      expect(pages.length).toBeGreaterThan(role === 'admin' ? 50 : 30);
      const page = await b.openAs(role === 'admin' ? admin : manager, '/account');
      await page.setViewportSize(PHONE);
      const tooWide: unknown[] = [];
      for (const route of pages) {
        const url = urlOf(route);
        const res = await page.goto(url);
        expect({ url, status: res?.status() }).toEqual({ url, status: 200 });
        const { scrollWidth, clientWidth, widest } = await widthOf(page);
        if (scrollWidth > clientWidth) tooWide.push({ url, scrollWidth, widest });
        if (role === 'admin' && process.env.SCREENSHOTS === '1')
          await screenshot(page, `phone${route.path.replace(/[/:]+/g, '-')}`, [PHONE]);
      }
      expect(tooWide).toEqual([]);
    });
  }
});
