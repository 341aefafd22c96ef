import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stocktakesService } from '../../src/modules/stocktakes/stocktakes.service';
import type { UserRow } from '../../src/modules/users/users.service';
import { buildUser } from '../helpers/factories';
import { buildStockedItem, movementsOf, stockOf } from '../helpers/inventory-factories';
import { buildOrder, buildSupplier } from '../helpers/purchasing-factories';
import { writeBarcodeVideo } from '../helpers/barcode-video';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';

/** What the fake camera films: the Code 128 barcode of this SKU, the one item of this file. */
const FILMED_SKU = 'CAM-4711';
/** Longer than the camera's cooldown (1.5 s): a barcode held in view this long is still counted once. */
const HELD_IN_VIEW_MS = 2500;

let videoDir: string;
const videoFile = () => path.join(videoDir, 'barcode.y4m');
// Chromium's fake camera plays the test's video. Each context is granted the camera (or not) through
// Playwright, so a refusal can be tested too (--use-fake-ui-for-media-stream would accept every request).
const b = useBrowserApp(
  {},
  {
    extraArgs: () => ['--use-fake-device-for-media-stream', `--use-file-for-fake-video-capture=${videoFile()}`],
  },
);

let clerk: UserRow;
let manager: UserRow;
let filmed: Awaited<ReturnType<typeof buildStockedItem>>;
beforeAll(async () => {
  videoDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-camera-'));
  await writeBarcodeVideo(videoFile(), FILMED_SKU);
  [clerk, manager, filmed] = await Promise.all([
    buildUser(b.t.db, { firstName: 'Cam', lastName: 'Clerk' }),
    buildUser(b.t.db, { role: 'manager', firstName: 'Cam', lastName: 'Manager' }),
    buildStockedItem(b.t.db, 5, { name: 'Safety goggles', sku: FILMED_SKU, price: '3.00' }),
  ]);
});
afterAll(() => fs.rm(videoDir, { recursive: true, force: true }));

/** The page at path, signed in, its camera allowed; every request it makes is noted. */
async function openWithCamera(user: UserRow, pagePath: string) {
  const page = await b.newPage();
  await page.context().grantPermissions(['camera'], { origin: b.baseUrl });
  const requests: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  const signedIn = await page.request.post('/api/auth/login', {
    data: { email: user.email, password: 'correct horse battery staple' },
  });
  expect(signedIn.status()).toBe(200);
  await page.goto(pagePath);
  return { page, requests };
}

/** Where the browser has no Barcode Detection API (Chromium on Linux), the ZXing reader came from our origin, not a CDN. */
async function expectReaderFromOwnOrigin(page: Page, requests: string[]) {
  expect(requests.filter((url) => !url.startsWith(b.baseUrl))).toEqual([]);
  if (await page.evaluate("'BarcodeDetector' in window && !('BarcodeDetectionAPI' in window)")) return;
  expect(requests).toContain(`${b.baseUrl}/assets/barcode-detector/ponyfill.js`);
  expect(requests).toContain(`${b.baseUrl}/assets/zxing-wasm/zxing_reader.wasm`);
}

const basketRows = (page: Page) => page.getByRole('region', { name: /^Basket/ }).locator('tbody tr');

describe('Scan with camera at the counter', () => {
  it('adds the filmed item to the basket once while it is held in view; Stop lets the camera go', async () => {
    const { page, requests } = await openWithCamera(clerk, '/counter');
    const camera = page.getByRole('button', { name: 'Scan with camera' });
    await expectAccessible(page);

    await camera.click();
    await page.getByLabel('Camera preview: hold a barcode in view').waitFor();
    await basketRows(page).filter({ hasText: 'Safety goggles' }).waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: `Scanned ${FILMED_SKU}` })
      .waitFor();
    // the scan went the scanner's way: the counter's scan log has it
    await page.getByRole('log', { name: 'Scans' }).getByRole('listitem').filter({ hasText: FILMED_SKU }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'camera-counter');

    // still in view after the cooldown: counted once
    await page.waitForTimeout(HELD_IN_VIEW_MS);
    await page.getByRole('button', { name: 'Stop camera' }).click();
    await page.getByRole('status').filter({ hasText: 'Camera stopped.' }).waitFor();
    expect(await camera.getAttribute('aria-expanded')).toBe('false');
    expect(await page.getByLabel('Camera preview: hold a barcode in view').isHidden()).toBe(true);
    expect(await page.getByLabel('Quantity of Safety goggles').inputValue()).toBe('1');

    const draft = await b.t.db('quotes').where({ user_id: clerk.id }).first();
    const lines = await b.t.db('quote_items').where({ quote_id: draft.id });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ item_id: filmed.id, quantity: '1.00' });
    await expectReaderFromOwnOrigin(page, requests);
  });

  it('a camera not allowed is said plainly, and the basket is as it was; no camera API, no button', async () => {
    const refused = await buildUser(b.t.db, { firstName: 'No', lastName: 'Camera' });
    const page = await b.openAs(refused, '/counter');
    await page.getByRole('button', { name: 'Scan with camera' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'The camera was not allowed. Allow this site to use the camera in the browser' })
      .waitFor();
    expect(await page.getByLabel('Camera preview: hold a barcode in view').isHidden()).toBe(true);
    await page.getByText('The basket is empty').waitFor();
    expect(
      await b.t
        .db('quotes')
        .where({ user_id: refused.id })
        .whereExists(function () {
          this.select(1).from('quote_items').whereRaw('quote_items.quote_id = quotes.id');
        }),
    ).toEqual([]);
    expect(
      await page
        .getByRole('button', { name: 'Scan with camera' })
        .evaluate((el) => el === el.ownerDocument.activeElement),
    ).toBe(true);
    await screenshot(page, 'camera-refused');

    const without = await b.newPage();
    await without.context().addInitScript({ content: 'delete MediaDevices.prototype.getUserMedia;' });
    await without.request.post('/api/auth/login', {
      data: { email: clerk.email, password: 'correct horse battery staple' },
    });
    await without.goto('/counter');
    await without.getByLabel('Scan or type SKU').waitFor();
    expect(await without.getByRole('button', { name: 'Scan with camera' }).count()).toBe(0);
  });
});

describe('Scan with camera on the receive form', () => {
  it("adds one to the filmed item's received quantity; Receive puts it into stock", async () => {
    const supplier = await buildSupplier(b.t.db, { name: 'Camera Optics Ltd' });
    const { order } = await buildOrder(b.t.db, supplier.id, [
      { itemId: filmed.id, name: 'Safety goggles', quantity: '6', unitCost: '1.50' },
    ]);
    const before = await stockOf(b.t.db, filmed.id);
    const { page, requests } = await openWithCamera(manager, `/orders/${order.order_id}`);
    await page.getByRole('button', { name: 'Scan with camera' }).click();
    await page.getByRole('status').filter({ hasText: 'Safety goggles: 1 of 6 outstanding' }).waitFor();
    await page.waitForTimeout(HELD_IN_VIEW_MS);
    await page.getByRole('button', { name: 'Stop camera' }).click();
    expect(await page.getByLabel('Received quantity of Safety goggles').inputValue()).toBe('1');
    await expectAccessible(page);
    await screenshot(page, 'camera-receive');

    await page.getByRole('button', { name: 'Receive', exact: true }).click();
    await page.getByText(`Order ${order.order_id} partially received`).waitFor();
    expect(Number(await stockOf(b.t.db, filmed.id))).toBe(Number(before) + 1);
    expect((await movementsOf(b.t.db, filmed.id)).at(-1)).toMatchObject({
      type: 'in',
      quantity: '1.00',
      reference_type: 'order',
      reference_id: order.order_id,
    });
    await expectReaderFromOwnOrigin(page, requests);
  });
});

describe('Scan with camera on the stocktake count page', () => {
  it('counts the filmed item once while it is held in view', async () => {
    const { stocktake } = await stocktakesService(b.t.db).create(
      { name: 'Goggles shelf', scope: { itemIds: [filmed.id] }, blind: false },
      { kind: 'session', userId: manager.id, email: manager.email, mcpKeyId: null, ip: null },
    );
    const { page, requests } = await openWithCamera(clerk, `/stocktakes/${stocktake.id}/count`);
    await page.getByRole('button', { name: 'Scan with camera' }).click();
    await page.getByRole('status').filter({ hasText: 'Safety goggles: 1 counted' }).waitFor();
    await page.waitForTimeout(HELD_IN_VIEW_MS);
    await page.getByRole('button', { name: 'Stop camera' }).click();
    await expectAccessible(page);
    await screenshot(page, 'camera-stocktake-count');

    const line = await b.t.db('stocktake_lines').where({ stocktake_id: stocktake.id, item_id: filmed.id }).first();
    expect({ counted: Number(line.counted), countedBy: line.counted_by }).toEqual({ counted: 1, countedBy: clerk.id });
    await expectReaderFromOwnOrigin(page, requests);
  });
});
