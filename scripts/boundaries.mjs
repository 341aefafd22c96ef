// dependency-cruiser over src/ with .dependency-cruiser.cjs, through its API: its command line
// refuses Node 20, which this project still supports (package.json engines).
//   node scripts/boundaries.mjs          checks the rules, that no modules import each other round a
//                                        cycle, and that each file a rule names by itself (the public
//                                        role files) exists; lists each violation, exits 1 on any
//   node scripts/boundaries.mjs --graph  rewrites the module graph in docs/ARCHITECTURE.md
// checkBoundaries() runs the check on another tree (the tests plant violations in fixture trees).
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const ARCHITECTURE = 'docs/ARCHITECTURE.md';
const GRAPH_START = '<!-- module graph: npm run graph -->';
const GRAPH_END = '<!-- end of module graph -->';

/**
 * The imports between modules tolerated on a cycle between modules. Issue 30 listed 29 when this check
 * came; issue 41 took the last apart (src/owners.ts and src/app.ts hand the owners' functions to the
 * modules that ask them, and the stock ledger sits below items). Any edge that closes a cycle fails,
 * and an entry that no longer lies on one must be removed, so the list stays empty.
 */
export const KNOWN_CYCLE_EDGES = new Set([]);

/** dependency-cruiser's answer for root's src/ under the rules of `config`. */
async function cruiseTree(root, config) {
  const options = await extractDepcruiseOptions(config);
  const tsConfig = options.tsConfig && { fileName: join(root, options.tsConfig.fileName) };
  const transpileOptions = tsConfig ? { tsConfig: extractTSConfig(tsConfig.fileName) } : {};
  const cruised = await cruise(
    ['src'],
    { ...options, tsConfig, baseDir: root, outputType: 'json' },
    {},
    transpileOptions,
  );
  return { cruised: JSON.parse(cruised.output), ruleSet: options.ruleSet };
}

/**
 * The boundary violations of root's src/ under `config` (a dependency-cruiser configuration), each a
 * line "<severity> <rule>: ...", and how many edges of `knownCycleEdges` still lie on a cycle.
 */
export async function checkBoundaries({
  root = '.',
  config = './.dependency-cruiser.cjs',
  knownCycleEdges = KNOWN_CYCLE_EDGES,
} = {}) {
  const { cruised, ruleSet } = await cruiseTree(root, config);
  const cycles = moduleCycles(moduleGraph(cruised.modules));
  const ruleViolations = cruised.summary.violations.map((v) => {
    const path = v.type === 'cycle' ? [v.from, ...v.cycle.map((step) => step.name)] : [v.from, v.to];
    return `${v.rule.severity} ${v.rule.name}: ${path.join(' → ')}`;
  });
  const cycleEdges = cycles.flatMap((cycle) => cycle.edges);
  const newEdges = cycleEdges
    .filter((edge) => !knownCycleEdges.has(edge.name))
    .map((edge) => `error no-module-cycle: ${edge.name} closes a cycle between modules: ${edge.imports}`);
  const staleEdges = [...knownCycleEdges]
    .filter((name) => !cycleEdges.some((edge) => edge.name === name))
    .map((name) => `error stale-known-cycle-edge: ${name} no longer lies on a cycle; remove it from KNOWN_CYCLE_EDGES`);
  const staleFiles = [...filesNamedByRules(ruleSet)]
    .filter(([file]) => !existsSync(join(root, file)))
    .map(
      ([file, rules]) =>
        `error stale-public-role-file: ${file} does not exist; remove it from PUBLIC_ROLE_FILES (named by ${rules.join(', ')})`,
    );
  return {
    violations: [...ruleViolations, ...newEdges, ...staleEdges, ...staleFiles],
    knownCycleEdges: cycleEdges.length - newEdges.length,
  };
}

/**
 * The files that the rules' paths name one by one (a pattern such as ^src/modules/audit/audit[.]actor[.]ts$:
 * the public role files), each with the rules that name it.
 */
function filesNamedByRules(ruleSet) {
  const files = new Map();
  for (const rule of ruleSet.forbidden ?? []) {
    const patterns = [rule.from, rule.to].flatMap((side) => [side.path ?? [], side.pathNot ?? []].flat());
    for (const pattern of patterns) {
      const file = /^\^((?:[\w/-]|\[\.\])+)\$$/.exec(pattern)?.[1].replaceAll('[.]', '.');
      if (file && !files.get(file)?.includes(rule.name)) files.set(file, [...(files.get(file) ?? []), rule.name]);
    }
  }
  return files;
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

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--graph')) {
    const { cruised } = await cruiseTree('.', './.dependency-cruiser.cjs');
    await writeGraph(moduleGraph(cruised.modules));
  } else {
    const { violations, knownCycleEdges } = await checkBoundaries();
    for (const violation of violations) console.log(`  ${violation}`);
    if (knownCycleEdges > 0) {
      console.log(`  (${knownCycleEdges} known edges still lie on cycles between modules: KNOWN_CYCLE_EDGES)`);
    }
    if (violations.length > 0) {
      console.log(`\n${violations.length} boundary violations (.dependency-cruiser.cjs, scripts/boundaries.mjs).`);
    }
    process.exitCode = violations.length > 0 ? 1 : 0;
  }
}
