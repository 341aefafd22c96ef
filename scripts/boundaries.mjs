// dependency-cruiser over src/ with .dependency-cruiser.cjs, through its API: its command line
// refuses Node 20, which this project still supports (package.json engines).
//   node scripts/boundaries.mjs          checks the rules, and that no modules import each other
//                                        round a cycle; lists each violation, exits 1 on any
//   node scripts/boundaries.mjs --graph  rewrites the module graph in docs/ARCHITECTURE.md
import { readFile, writeFile } from 'node:fs/promises';
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const ARCHITECTURE = 'docs/ARCHITECTURE.md';
const GRAPH_START = '<!-- module graph: npm run graph -->';
const GRAPH_END = '<!-- end of module graph -->';

/**
 * The imports between modules that lay on a cycle between modules when this check came (issue 30),
 * tolerated until taken apart: pairs of owners that each call the other (items and categories,
 * suppliers and their sources), and the note references (notes asks each owner
 * whether a record exists, and those owners attach notes). Any other edge that closes a cycle fails,
 * and an entry that no longer lies on one must be removed, so the list only shrinks.
 */
const KNOWN_CYCLE_EDGES = new Set([
  'categories → items',
  'chargecodes → categories',
  'chargecodes → sales',
  'invoices → items',
  'invoices → sources',
  'invoices → suppliers',
  'items → categories',
  'items → notes',
  'notes → chargecodes',
  'notes → items',
  'notes → orders',
  'notes → sales',
  'notes → suppliers',
  'orders → invoices',
  'orders → sources',
  'orders → suppliers',
  'orders → items',
  'orders → categories',
  'sales → chargecodes',
  'sales → items',
  'sales → notes',
  'sources → items',
  'sources → suppliers',
  'suppliers → notes',
  'suppliers → sources',
]);

const options = await extractDepcruiseOptions('./.dependency-cruiser.cjs');
const transpileOptions = { tsConfig: extractTSConfig(options.tsConfig.fileName) };
const cruised = JSON.parse((await cruise(['src'], { ...options, outputType: 'json' }, {}, transpileOptions)).output);
const graph = moduleGraph(cruised.modules);

if (process.argv.includes('--graph')) {
  await writeGraph(graph);
} else {
  const { violations } = cruised.summary;
  const cycles = moduleCycles(graph);
  for (const v of violations) {
    const path = v.type === 'cycle' ? [v.from, ...v.cycle.map((step) => step.name)] : [v.from, v.to];
    console.log(`  ${v.rule.severity} ${v.rule.name}: ${path.join(' → ')}`);
  }
  const newEdges = cycles.flatMap((cycle) => cycle.edges.filter((edge) => !KNOWN_CYCLE_EDGES.has(edge.name)));
  for (const edge of newEdges)
    console.log(`  error no-module-cycle: ${edge.name} closes a cycle between modules: ${edge.imports}`);
  const known = cycles.flatMap((cycle) => cycle.edges).length - newEdges.length;
  if (known > 0) console.log(`  (${known} known edges still lie on cycles between modules: KNOWN_CYCLE_EDGES)`);
  const stale = [...KNOWN_CYCLE_EDGES].filter((name) => !cycles.some((c) => c.edges.some((e) => e.name === name)));
  for (const name of stale)
    console.log(`  error stale-known-cycle-edge: ${name} no longer lies on a cycle; remove it from KNOWN_CYCLE_EDGES`);
  const count = violations.length + newEdges.length + stale.length;
  if (count > 0) console.log(`\n${count} boundary violations (.dependency-cruiser.cjs, scripts/boundaries.mjs).`);
  process.exitCode = count > 0 ? 1 : 0;
}

/**
 * Which modules (src/modules/<name>/) each module imports from, with the imports that make each
 * edge. A file-level cycle is a rule of .dependency-cruiser.cjs; a cycle between modules is
 * found here, since dependency-cruiser looks for cycles between files only.
 */
function moduleGraph(modules) {
  const moduleOf = (path) => /^src\/modules\/([^/]+)\//.exec(path)?.[1];
  const graph = new Map();
  for (const file of modules) {
    const from = moduleOf(file.source);
    if (!from) continue;
    if (!graph.has(from)) graph.set(from, new Map());
    for (const dependency of file.dependencies) {
      const to = moduleOf(dependency.resolved);
      if (!to || to === from) continue;
      const imports = graph.get(from).get(to) ?? [];
      graph.get(from).set(to, [...imports, `${file.source} → ${dependency.resolved}`]);
    }
  }
  return graph;
}

/** The strongly connected groups of modules (Tarjan), each with an import for each edge that ties it. */
function moduleCycles(graph) {
  const index = new Map();
  const lowLink = new Map();
  const stack = [];
  const cycles = [];
  const visit = (name) => {
    index.set(name, index.size);
    lowLink.set(name, index.get(name));
    stack.push(name);
    for (const next of graph.get(name)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        lowLink.set(name, Math.min(lowLink.get(name), lowLink.get(next)));
      } else if (stack.includes(next)) {
        lowLink.set(name, Math.min(lowLink.get(name), index.get(next)));
      }
    }
    if (lowLink.get(name) !== index.get(name)) return;
    const group = stack.splice(stack.indexOf(name)).sort();
    if (group.length < 2) return;
    const edges = group.flatMap((from) =>
      [...(graph.get(from) ?? [])]
        .filter(([to]) => group.includes(to))
        .map(([to, [first, ...more]]) => ({
          name: `${from} → ${to}`,
          imports: `${first}${more.length ? ` (and ${more.length} more)` : ''}`,
        })),
    );
    cycles.push({ modules: group, edges });
  };
  for (const name of [...graph.keys()].sort()) if (!index.has(name)) visit(name);
  return cycles;
}

async function writeGraph(graph) {
  const lines = [...graph]
    .map(([name, uses]) => [name, [...uses.keys()].sort()])
    .sort(([a], [b]) => a.localeCompare(b));
  const width = Math.max(...lines.map(([name]) => name.length));
  const text = lines.map(([name, uses]) => `${name.padEnd(width)}  → ${uses.join(', ') || '(none)'}`).join('\n');
  const doc = await readFile(ARCHITECTURE, 'utf8');
  const start = doc.indexOf(GRAPH_START);
  const end = doc.indexOf(GRAPH_END);
  if (start < 0 || end < start) throw new Error(`${ARCHITECTURE} has no "${GRAPH_START}" ... "${GRAPH_END}" block`);
  await writeFile(
    ARCHITECTURE,
    `${doc.slice(0, start)}${GRAPH_START}\n\n\`\`\`text\n${text}\n\`\`\`\n\n${doc.slice(end)}`,
  );
}
