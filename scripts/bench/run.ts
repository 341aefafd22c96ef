// npm run bench [-- name ...]: runs every benchmark in scripts/bench (or the named ones).
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { recordedTargets } from './lib';

const dir = path.dirname(fileURLToPath(import.meta.url));
const available = (await fs.readdir(dir))
  .filter((f) => f.endsWith('.ts') && !['lib.ts', 'run.ts'].includes(f))
  .map((f) => f.replace(/\.ts$/, ''))
  .sort();
// issue 31 names one command for the scanner floor: `npm run bench -- stocktake` times the labels too
const BROUGHT_ALONG: Record<string, string[]> = { stocktake: ['labels'] };
// arguments starting with -- are a benchmark's own options (e.g. `scale --size=1x`)
const wanted = process.argv
  .slice(2)
  .filter((arg) => !arg.startsWith('--'))
  .flatMap((name) => [name, ...(BROUGHT_ALONG[name] ?? [])]);
const selected = wanted.length ? available.filter((name) => wanted.includes(name)) : available;
console.log(`# stores service benchmarks (${os()}): ${selected.join(', ')}`);

for (const name of selected) {
  const bench = (await import(pathToFileURL(path.join(dir, `${name}.ts`)).href)) as { run: () => Promise<void> };
  console.log(`\n# ${name}`);
  await bench.run();
}

const targets = recordedTargets();
if (targets.length > 0) {
  console.log('\n# targets');
  for (const t of targets)
    console.log(`  ${t.met ? 'met   ' : 'MISSED'} ${t.figure}: ${t.value} ${t.unit} (${t.target})`);
}

function os() {
  return `${process.platform} ${process.arch}, node ${process.version}, ${(globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? '?'} cores`;
}
