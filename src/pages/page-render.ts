import path from 'node:path';
import { createRequire } from 'node:module';
import ejs from 'ejs';
import express, { type Express, type Request } from 'express';
import { FORMATTERS } from '../lib/format';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const VIEWS_DIR = path.join(ROOT, 'views');
const PUBLIC_DIR = path.join(ROOT, 'public');
const LAYOUT = path.join(VIEWS_DIR, 'layout.ejs');
/** Browsers ask for /favicon.ico whatever the page links: the icon at the path they ask. */
const FAVICON = path.join(PUBLIC_DIR, 'favicon.ico');
/** A page's `<meta name="description">` unless its view passes its own `description`. */
const DEFAULT_DESCRIPTION =
  'The university stores service: the counter, stock, quotes and sales on charge codes, purchasing and finance.';
/** The folder of a package's built files (its main entry is in it). */
const distDir = (name: string) => path.dirname(createRequire(import.meta.url).resolve(name));
/** barcode-detector's main entry (dist/cjs/index.js): its browser builds (IIFE) are in dist/iife beside it. */
const BARCODE_DETECTOR_MAIN = createRequire(import.meta.url).resolve('barcode-detector');
export const BARCODE_DETECTOR_DIR = path.resolve(path.dirname(BARCODE_DETECTOR_MAIN), '../iife');
/**
 * The ZXing reader's WebAssembly that barcode-detector was built against (its own zxing-wasm: the
 * JavaScript glue in its bundle and the .wasm must be the same version), resolved from barcode-detector.
 */
export const ZXING_READER_DIR = path.dirname(
  createRequire(BARCODE_DETECTOR_MAIN).resolve('zxing-wasm/reader/zxing_reader.wasm'),
);

/**
 * EJS with one layout: a view whose file name starts with "_" is a partial (what htmx swaps in)
 * and is sent as it is; any other view is rendered into views/layout.ejs as `body`.
 */
function layoutEngine(file: string, locals: { cache?: unknown }, done: (err: unknown, html?: string) => void) {
  const options = { cache: Boolean(locals.cache), filename: file };
  ejs.renderFile(file, locals, options, (err, body) => {
    if (err) return done(err);
    if (path.basename(file).startsWith('_') || file === LAYOUT) return done(null, body);
    ejs.renderFile(LAYOUT, { ...locals, body }, { ...options, filename: LAYOUT }, done);
  });
}

/** Views, view helpers and the static assets: our own CSS/JS, the icon, htmx, Chart.js and Swagger UI from node_modules. */
export function configureViews(app: Express, cacheViews: boolean): void {
  app.engine('ejs', layoutEngine);
  app.set('view engine', 'ejs');
  app.set('views', VIEWS_DIR);
  app.set('view cache', cacheViews);
  Object.assign(app.locals, FORMATTERS, { description: DEFAULT_DESCRIPTION });
  const assets = { maxAge: '1h', index: false, fallthrough: false } as const;
  app.get('/favicon.ico', (_req, res, next) => res.sendFile(FAVICON, { maxAge: '1d' }, (err) => err && next(err)));
  app.use('/assets/htmx', express.static(distDir('htmx.org'), assets));
  app.use('/assets/chart.js', express.static(distDir('chart.js'), assets));
  app.use('/assets/swagger-ui', express.static(distDir('swagger-ui-dist'), assets));
  // the camera's barcode reader where the browser has no BarcodeDetector, and its WebAssembly, from our own origin
  app.use('/assets/barcode-detector', express.static(BARCODE_DETECTOR_DIR, assets));
  app.use('/assets/zxing-wasm', express.static(ZXING_READER_DIR, assets));
  app.use('/assets', express.static(PUBLIC_DIR, assets));
}

/** An htmx request wants the partial; a history restore or a plain browser request wants the whole page. */
export const wantsPartial = (req: Request): boolean =>
  req.get('HX-Request') === 'true' && req.get('HX-History-Restore-Request') !== 'true';
