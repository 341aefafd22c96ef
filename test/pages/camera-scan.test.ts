import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildUser } from '../helpers/factories';
import { buildStockedItem } from '../helpers/inventory-factories';
import { writeBarcodeVideo } from '../helpers/barcode-video';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';

/** The SKU the fake camera shows: every item this file makes at the counter is this one. */
const FILMED_SKU = 'CAM-4711';

let videoDir: string;
const b = useBrowserApp(
  {},
  {
    extraArgs: () => [
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      `--use-file-for-fake-video-capture=${path.join(videoDir, 'barcode.y4m')}`,
    ],
  },
);

beforeAll(async () => {
  videoDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-camera-'));
  await writeBarcodeVideo(path.join(videoDir, 'barcode.y4m'), FILMED_SKU);
});
afterAll(() => fs.rm(videoDir, { recursive: true, force: true }));

describe('Scan with camera at the counter', () => {
  it('adds the filmed item to the basket', async () => {
    const user = await buildUser(b.t.db, { firstName: 'Cam', lastName: 'Era' });
    const item = await buildStockedItem(b.t.db, 5, { name: 'Safety goggles', sku: FILMED_SKU });
    const page = await b.openAs(user, '/counter');
    page.on('console', (m) => console.log('console', m.type(), m.text()));
    console.log(await page.evaluate("'BarcodeDetector' in window"));
    await page.getByRole('button', { name: 'Scan with camera' }).click();
    await page
      .getByRole('region', { name: /^Basket/ })
      .locator('tbody tr')
      .filter({ hasText: item.name })
      .waitFor();
    await screenshot(page, 'camera');
  });
});
