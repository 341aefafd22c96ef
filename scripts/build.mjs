// The production build (`npm start` runs it first, the Docker image at build time): the
// TypeScript of src/ bundled into dist/ as plain JavaScript, so the server runs on node alone.
// Plain JavaScript itself, because tsx is a development dependency.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT_DIR = path.join(ROOT, 'dist');
/** Everything the bundle is made from (the packages stay outside it, imported from node_modules). */
const INPUTS = ['src', 'migrations', 'tsconfig.json', 'package-lock.json', 'scripts/build.mjs'];
/** The digest of INPUTS that dist/ was built from: an unchanged tree is not built again, which keeps a second off every start. */
const STAMP = path.join(OUT_DIR, '.inputs-sha256');

async function inputsDigest() {
  const hash = createHash('sha256');
  for (const input of INPUTS) {
    const full = path.join(ROOT, input);
    const files = (await stat(full)).isDirectory()
      ? (await readdir(full, { recursive: true, withFileTypes: true }))
          .filter((entry) => entry.isFile())
          .map((entry) => path.join(entry.parentPath, entry.name))
          .sort()
      : [full];
    for (const file of files)
      hash
        .update(path.relative(ROOT, file))
        .update('\0')
        .update(await readFile(file))
        .update('\0');
  }
  return hash.digest('hex');
}

/** Writes to a temporary name and renames into place, so a reader never sees a half-written file. */
async function replaceFile(file, contents) {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, contents);
  await rename(temporary, file);
}

const digest = await inputsDigest();
if ((await readFile(STAMP, 'utf8').catch(() => undefined)) === digest) process.exit(0);
const { build } = await import('esbuild');
/** Entry points; a worker thread's module is one, so that it can be started from its own file. */
const ENTRIES = ['src/server.ts', 'src/modules/invoices/invoices.pdf-worker.ts'];
const entryNames = new Set(ENTRIES.map((entry) => path.basename(entry, '.ts')));

/**
 * Every module keeps its source file's import.meta: files read relative to a module (views,
 * public/, package.json, migrations/) resolve exactly as under tsx, whichever file of the flat
 * dist/ the module ends up in. The one exception is a worker started by file,
 * `new URL('./name.ts', import.meta.url)`, which becomes that entry's compiled file in dist/.
 */
const sourceImportMeta = {
  name: 'source-import-meta',
  setup(esbuild) {
    esbuild.onLoad({ filter: /\.ts$/ }, async ({ path: file }) => {
      const source = await readFile(file, 'utf8');
      if (!source.includes('import.meta.')) return { contents: source, loader: 'ts' };
      const sourceUrl = `new URL(${JSON.stringify(path.relative(OUT_DIR, file).split(path.sep).join('/'))}, import.meta.url)`;
      const contents =
        `import { fileURLToPath as __sourcePath } from 'node:url';\n` +
        source
          .replace(/new URL\('\.\/([\w.-]+)\.ts', import\.meta\.url\)/g, (_, name) => {
            if (!entryNames.has(name))
              throw new Error(
                `${file}: ${name}.ts is started from its own file but is not an entry point of the build`,
              );
            return `new URL('./${name}.js', __realModuleUrl)`;
          })
          .replaceAll('import.meta.url', `${sourceUrl}.href`)
          .replaceAll('import.meta.filename', `__sourcePath(${sourceUrl})`)
          .replaceAll('import.meta.dirname', `__sourcePath(new URL('.', ${sourceUrl}))`)
          .replaceAll('__realModuleUrl', 'import.meta.url');
      return { contents, loader: 'ts' };
    });
  },
};

const { outputFiles } = await build({
  absWorkingDir: ROOT,
  entryPoints: ENTRIES,
  outdir: OUT_DIR,
  entryNames: '[name]',
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  plugins: [sourceImportMeta],
  logLevel: 'warning',
  write: false,
});

// Only changed files are written, each renamed into place, so that a server starting from dist/
// at the same moment never reads a half-written module.
await mkdir(OUT_DIR, { recursive: true });
const built = new Set([path.basename(STAMP)]);
for (const { path: file, contents } of outputFiles) {
  built.add(path.basename(file));
  const current = await readFile(file).catch(() => undefined);
  if (!current || Buffer.compare(current, contents) !== 0) await replaceFile(file, contents);
}
for (const name of await readdir(OUT_DIR)) {
  if (!built.has(name) && !name.endsWith('.tmp')) await rm(path.join(OUT_DIR, name), { force: true });
}
await replaceFile(STAMP, digest);
