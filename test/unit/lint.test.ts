import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkBoundaries } from '../../scripts/boundaries.mjs';
import { lintTables } from '../../scripts/lint-tables.mjs';

// The checks of `npm run lint` run on small source trees written here, each with one violation planted.

const roots: string[] = [];
afterAll(() => Promise.all(roots.map((root) => fs.rm(root, { recursive: true, force: true }))));

/** A source tree in a fresh temporary folder: its files by path. */
async function tree(files: Record<string, string>): Promise<string> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-lint-'));
  roots.push(root);
  for (const [file, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await fs.writeFile(path.join(root, file), text);
  }
  return root;
}

describe('lint-tables: a module owns its tables and their columns', () => {
  const items = {
    'src/modules/items/items.queries.ts': `import { sql, type Sql } from '../../db/sql';

/** items as \`alias\`: a table handle, for the items module's own statements. */
export const itemsAs = (alias: string): Sql => sql\`items \${sql.ident(alias)}\`;

/** items as \`alias\`, joined to the item \`itemId\` names. */
export const itemById = (alias: string, itemId: Sql): Sql =>
  sql\`items \${sql.ident(alias)} ON \${sql.ident(alias, 'id')} = \${itemId}\`;

/** An item reference's columns of the item \`alias\`. */
export const itemRefColumns = (alias: string): Sql =>
  sql.join(['id', 'sku', 'name'].map((column) => sql.ident(alias, column)));
`,
    'src/modules/items/items.service.ts': `import type { Db } from '../../db/knex';
import { sql, toRaw } from '../../db/sql';
import { itemsAs } from './items.queries';

export const itemNames = (db: Db) => db('items as i').select('i.name').orderBy('i.sku');
export const itemPrices = (db: Db) => toRaw(db, sql\`SELECT i.price FROM \${itemsAs('i')}\`);
`,
    'src/modules/users/users.queries.ts': `import type { Knex } from 'knex';
import { sql, type Sql } from '../../db/sql';

/** The UserRef columns of the user \`alias\`, named with \`prefix\`. */
export const userRefColumns = (alias: string, prefix: string): Sql =>
  sql.join(['email', 'first_name'].map((column) => sql\`\${sql.ident(alias, column)} AS \${sql.ident(prefix + column)}\`));

/** Left-joins users as \`alias\` on the caller's \`userIdColumn\` and selects the user's reference. */
export function joinUserRef<Q extends Knex.QueryBuilder>(query: Q, { alias, userIdColumn }: { alias: string; userIdColumn: string }): Q {
  return query.leftJoin(\`users as \${alias}\`, \`\${alias}.id\`, userIdColumn).select(\`\${alias}.email\`) as Q;
}
`,
  };
  const stocktakes = (text: string) => ({ ...items, 'src/modules/stocktakes/stocktakes.service.ts': text });

  it("passes a tree whose modules read another's columns through its fragments, and name their own", async () => {
    const root = await tree(
      stocktakes(`import type { Db } from '../../db/knex';
import { sql, toRaw } from '../../db/sql';
import { itemById, itemRefColumns } from '../items/items.queries';
import { joinUserRef, userRefColumns } from '../users/users.queries';

export const lines = (db: Db) =>
  toRaw(db, sql\`SELECT l.id, l.counted, \${itemRefColumns('i')}, \${userRefColumns('u', 'counter_')}
                   FROM stocktake_lines l JOIN \${itemById('i', sql.raw('l.item_id'))}\`);
export const counts = (db: Db) =>
  joinUserRef(db('stocktake_counts as c').select('c.*'), { alias: 'u', userIdColumn: 'c.counted_by' });
`),
    );
    expect(await lintTables(root)).toEqual([]);
  });

  it("fails a column named through an alias of another module's table, bound by the owner's fragment", async () => {
    const root = await tree(
      stocktakes(`import { sql } from '../../db/sql';
import { itemById } from '../items/items.queries';

export const LINES = sql\`SELECT l.id, \${sql.ident('i', 'sku')},
                               i.name FROM stocktake_lines l JOIN \${itemById('i', sql.raw('l.item_id'))}\`;
`),
    );
    expect(await lintTables(root)).toEqual([
      'src/modules/stocktakes/stocktakes.service.ts:4: i.sku (alias of items, owned by src/modules/items/)',
      'src/modules/stocktakes/stocktakes.service.ts:5: i.name (alias of items, owned by src/modules/items/)',
    ]);
  });

  it('fails a column named through an alias that an options object or a column fragment binds', async () => {
    const root = await tree(
      stocktakes(`import type { Db } from '../../db/knex';
import { sql } from '../../db/sql';
import { joinUserRef, userRefColumns } from '../users/users.queries';

export const counts = (db: Db) =>
  joinUserRef(db('stocktake_counts as c').select('c.*'), { alias: 'u', userIdColumn: 'c.counted_by' })
    .orderBy('u.first_name');
export const CREATOR = sql\`\${userRefColumns('cu', 'creator_')}, cu.*\`;
`),
    );
    expect(await lintTables(root)).toEqual([
      'src/modules/stocktakes/stocktakes.service.ts:7: u.first_name (alias of users, owned by src/modules/users/)',
      'src/modules/stocktakes/stocktakes.service.ts:8: cu.* (alias from userRefColumns, owned by src/modules/users/)',
    ]);
  });

  it("passes the columns a read model names under the caller's alias, and fails any other column read through it", async () => {
    const root = await tree({
      'src/modules/categories/categories.queries.ts': `import { sql, type Sql } from '../../db/sql';

const CATEGORY_REF_COLUMNS = 'id AS category_id, name AS category_name';

/** Every category as \`alias\`, with its named columns category_id and category_name. */
export const categoryRefs = (alias: string): Sql =>
  sql\`(SELECT \${sql.raw(CATEGORY_REF_COLUMNS)} FROM categories) \${sql.ident(alias)}\`;
`,
      'src/modules/dashboard/dashboard.service.ts': `import { sql } from '../../db/sql';
import { categoryRefs } from '../categories/categories.queries';

export const NAMED = sql\`SELECT c.category_name FROM \${categoryRefs('c')} ORDER BY c.category_id\`;
export const OWN = sql\`SELECT c.color FROM \${categoryRefs('c')}\`;
`,
    });
    expect(await lintTables(root)).toEqual([
      'src/modules/dashboard/dashboard.service.ts:5: c.color (alias from categoryRefs, owned by src/modules/categories/)',
    ]);
  });

  it('fails an alias that the file gives its own table too only in the statements binding it to the other', async () => {
    const root = await tree(
      stocktakes(`import { sql } from '../../db/sql';
import { itemById } from '../items/items.queries';

export const COUNTS = sql\`SELECT c.id, c.counted_by FROM stocktake_counts c\`;
export const ITEMS = sql\`SELECT c.name FROM stocktake_lines l JOIN \${itemById('c', sql.raw('l.item_id'))}\`;
export const BY_COUNTER = sql\`c.counted_by = 'x'\`;
export const FOUND = sql\`WITH found AS (SELECT f.* FROM stocktake_lines l JOIN \${itemById('f', sql.raw('l.item_id'))})
                         SELECT f.sku FROM found f\`;
`),
    );
    expect(await lintTables(root)).toEqual([
      'src/modules/stocktakes/stocktakes.service.ts:5: c.name (alias of items, owned by src/modules/items/)',
      'src/modules/stocktakes/stocktakes.service.ts:7: f.* (alias of items, owned by src/modules/items/)',
      'src/modules/stocktakes/stocktakes.service.ts:8: f.sku (alias of items, owned by src/modules/items/)',
    ]);
  });

  it("fails another module's table named with an alias in knex or SQL, and each column read through it", async () => {
    const root = await tree(
      stocktakes(`import type { Db } from '../../db/knex';
import { sql } from '../../db/sql';

export const skus = (db: Db) => db('items as it').select('it.sku');
export const PRICES = sql\`UPDATE stocktake_lines l SET unit_price = x.price
                            FROM items x WHERE x.id = l.item_id\`;
`),
    );
    expect(await lintTables(root)).toEqual([
      'src/modules/stocktakes/stocktakes.service.ts:4: items (owned by src/modules/items/)',
      'src/modules/stocktakes/stocktakes.service.ts:4: it.sku (alias of items, owned by src/modules/items/)',
      'src/modules/stocktakes/stocktakes.service.ts:5: x.price (alias of items, owned by src/modules/items/)',
      'src/modules/stocktakes/stocktakes.service.ts:6: items (owned by src/modules/items/)',
      'src/modules/stocktakes/stocktakes.service.ts:6: x.id (alias of items, owned by src/modules/items/)',
    ]);
  });

  it('fails a table handle imported by another module', async () => {
    const root = await tree(
      stocktakes(`import { sql } from '../../db/sql';
import { itemRefColumns, itemsAs } from '../items/items.queries';

export const ITEMS = sql\`SELECT \${itemRefColumns('i')} FROM \${itemsAs('i')}\`;
`),
    );
    expect(await lintTables(root)).toEqual([
      'src/modules/stocktakes/stocktakes.service.ts:2: itemsAs imports the table handle of items (owned by src/modules/items/): no table handle leaves its module',
    ]);
  });

  it("fails a table named at run time outside every table's owner, and lets an owner name its own", async () => {
    const count = `import type { Db } from '../../db/knex';
import { sql, toRaw } from '../../db/sql';

export const countRows = (db: Db, table: string, column: string, id: string) =>
  db.raw('SELECT count(*) FROM ?? WHERE ?? = ?', [table, column, id]);
export const countAll = (db: Db, table: string) => toRaw(db, sql\`SELECT count(*) FROM \${sql.ident(table)}\`);
`;
    const root = await tree({ ...items, 'src/db/references.ts': count, 'src/modules/items/items.counts.ts': count });
    expect(await lintTables(root)).toEqual([
      'src/db/references.ts:5: FROM ?? names a table at run time outside its owner',
      'src/db/references.ts:6: FROM sql.ident(table) names a table at run time outside its owner',
    ]);
  });
});

describe('boundaries: public files only, no cycle between modules, no stale public role file', () => {
  /** A dependency-cruiser configuration like .dependency-cruiser.cjs, with these public role files. */
  const config = (publicRoleFiles: string[]) => `module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'module-public-files-only',
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/', pathNot: ['^src/modules/$1/', '[.]service[.]ts$', ${publicRoleFiles.map((f) => `'^src/modules/${f.replace(/[.]/g, '[.]')}$'`).join(', ')}] },
    },
  ],
  options: { tsPreCompilationDeps: true, tsConfig: { fileName: 'tsconfig.json' } },
};
`;
  const modules = {
    'tsconfig.json': JSON.stringify({
      compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler', strict: true },
    }),
    'src/modules/a/a.service.ts': `import { record } from '../b/b.ledger';
import { bValue } from '../b/b.service';

export const aValue = () => record(bValue());
`,
    'src/modules/b/b.service.ts': 'export const bValue = () => 1;\n',
    'src/modules/b/b.ledger.ts': 'export const record = (value: number) => value;\n',
  };
  const check = async (files: Record<string, string>, knownCycleEdges = new Set<string>()) => {
    const root = await tree(files);
    return checkBoundaries({ root, config: path.join(root, '.dependency-cruiser.cjs'), knownCycleEdges });
  };

  it('passes modules that import each other only through public files, one way round', async () => {
    expect(await check({ ...modules, '.dependency-cruiser.cjs': config(['b/b.ledger.ts']) })).toEqual({
      violations: [],
      knownCycleEdges: 0,
    });
  });

  it('fails an import of a file that is neither public nor a service', async () => {
    expect(await check({ ...modules, '.dependency-cruiser.cjs': config([]) })).toEqual({
      violations: ['error module-public-files-only: src/modules/a/a.service.ts → src/modules/b/b.ledger.ts'],
      knownCycleEdges: 0,
    });
  });

  it('fails a cycle between modules that no file cycle closes, unless its edges are known', async () => {
    const files = {
      ...modules,
      '.dependency-cruiser.cjs': config(['b/b.ledger.ts']),
      'src/modules/b/b.report.ts': `import { aValue } from '../a/a.service';

export const report = () => \`a is \${aValue()}\`;
`,
    };
    expect(await check(files)).toEqual({
      violations: [
        'error no-module-cycle: a → b closes a cycle between modules: src/modules/a/a.service.ts → src/modules/b/b.ledger.ts (and 1 more)',
        'error no-module-cycle: b → a closes a cycle between modules: src/modules/b/b.report.ts → src/modules/a/a.service.ts',
      ],
      knownCycleEdges: 0,
    });
    expect(await check(files, new Set(['a → b', 'b → a']))).toEqual({ violations: [], knownCycleEdges: 2 });
  });

  it('fails a known cycle edge that no longer lies on a cycle', async () => {
    const files = { ...modules, '.dependency-cruiser.cjs': config(['b/b.ledger.ts']) };
    expect(await check(files, new Set(['a → b']))).toEqual({
      violations: ['error stale-known-cycle-edge: a → b no longer lies on a cycle; remove it from KNOWN_CYCLE_EDGES'],
      knownCycleEdges: 0,
    });
  });

  it('fails a public role file that does not exist', async () => {
    const files = { ...modules, '.dependency-cruiser.cjs': config(['b/b.ledger.ts', 'b/b.gone.ts']) };
    expect(await check(files)).toEqual({
      violations: [
        'error stale-public-role-file: src/modules/b/b.gone.ts does not exist; remove it from PUBLIC_ROLE_FILES (named by module-public-files-only)',
      ],
      knownCycleEdges: 0,
    });
  });
});
