import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ZXING_WASM_SHA256, ZXING_WASM_VERSION } from 'barcode-detector/ponyfill';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BARCODE_DETECTOR_DIR } from '../src/pages/page-render';
import { testApp, type TestApp } from './helpers/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe('the camera barcode reader, served from our origin', () => {
  it("serves barcode-detector's browser build and the very ZXing WebAssembly it was built against, without sign-in", async () => {
    const script = await t.request.get('/assets/barcode-detector/ponyfill.js').expect(200);
    expect(script.headers['content-type']).toMatch(/^application\/javascript|^text\/javascript/);
    // the browser build checks its .wasm against this digest: the same version as the Node build's
    const served = await fs.readFile(path.join(BARCODE_DETECTOR_DIR, 'ponyfill.js'), 'utf8');
    expect(served).toContain(ZXING_WASM_SHA256);
    expect(served).toContain(`zxing-wasm@${ZXING_WASM_VERSION}`);

    const wasm = await t.request
      .get('/assets/zxing-wasm/zxing_reader.wasm')
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    expect(wasm.headers['content-type']).toBe('application/wasm');
    expect(
      createHash('sha256')
        .update(wasm.body as Buffer)
        .digest('hex'),
    ).toBe(ZXING_WASM_SHA256);
  });

  it('answers a missing asset 404 Not found, naming no file path', async () => {
    for (const missing of ['/assets/nope.css', '/assets/htmx/nope.js', '/assets/zxing-wasm/nope.wasm']) {
      const res = await t.request.get(missing).expect(404);
      expect(res.body).toEqual({ message: 'Not found' });
    }
  });
});
