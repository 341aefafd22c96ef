// Scale benchmark (issue 34): the same endpoints at 1x data (50,000 items with 10 movements each, 100,000 lots,
// 100,000 sales) and at 10x (500,000 items, 5,000,000 movements, 1,000,000 lots, 1,000,000 sales), 30 sequential
// signed-in requests each (median and p95, so the figure is one request's cost), the growth from
// 1x to 10x against the issue's bound (x1.5) and the dashboard page against 100 ms at 10x. Beside
// each, the server's CPU per request (node and PostgreSQL, from /proc): on a busy machine the
// medians of requests of a few ms move with the other load, the CPU a request costs much less.
//
// The data is seeded with set-based SQL (generate_series) through the tables, so the triggers keep
// what they keep (item_counts, the search generation, the sales rollup), and it obeys the ledger's
// rules: each item's movements chain previous_stock -> new_stock from 0, and its current_stock is
// its last movement's new_stock. A fixed 100 items are out of stock and 100 low at both sizes (the
// few rows that matter do not grow with the catalogue).
//
//   npm run bench -- scale                                  both sizes, every endpoint
//   npm run bench -- scale --size=1x                        one size (no growth figures)
//   npm run bench -- scale --endpoints=alerts,ledger        a subset (names as printed)
//   npm run bench -- scale --requests=10                    fewer requests per endpoint
import os from 'node:os';
import knex, { type Knex } from 'knex';
import { knexConfig } from '../../src/db/knex';
import { cpuMs, processTree } from './inventory';
import { BENCH_ADMIN, checkTarget, startBenchServer, type BenchServer, WORDS } from './lib';

const BASE_ITEMS = 50_000;
const BASE_SALES = 100_000;
const MOVEMENTS_PER_ITEM = 10;
/** issue 42: one item in TRACKED_EVERY is tracked by lot, with LOTS_PER_ITEM lots: 100,000 lots at 1x, 1,000,000 at 10x */
const TRACKED_EVERY = 5;
const LOTS_PER_ITEM = 10;
const CATEGORIES = 10;
const GROWTH_BOUND = 1.5;
const DASHBOARD_BOUND_MS = 100;
const WARMUP = 3;

type Context = { itemId: number; ledgerBeforeId: number | null; stocktakeId: number | null };
/** extra: measured only when named in --endpoints */
type Endpoint = {
  name: string;
  label: string;
  path: (c: Context) => string | null;
  extra?: boolean;
};

/** The issue's table, in its order, then the newer lists it names. */
const ENDPOINTS: Endpoint[] = [
  { name: 'dashboard', label: 'GET / (the dashboard page)', path: () => '/' },
  { name: 'alerts', label: 'GET /api/system/alerts', path: () => '/api/system/alerts' },
  { name: 'stats', label: 'GET /api/dashboard/stats', path: () => '/api/dashboard/stats' },
  { name: 'low-stock', label: 'GET /api/dashboard/low-stock', path: () => '/api/dashboard/low-stock' },
  { name: 'category-stats', label: 'GET /api/dashboard/category-stats', path: () => '/api/dashboard/category-stats' },
  { name: 'notifications', label: 'GET /api/notifications/low-stock', path: () => '/api/notifications/low-stock' },
  { name: 'replenishment', label: 'GET /api/replenishment', path: () => '/api/replenishment' },
  { name: 'ledger', label: 'GET /stock-movements (first page)', path: () => '/stock-movements' },
  { name: 'ledger-2000', label: 'GET /stock-movements?page=2000', path: () => '/stock-movements?page=2000' },
  {
    name: 'ledger-older',
    label: 'GET /stock-movements?before= (100,000 back)',
    path: (c) => (c.ledgerBeforeId === null ? null : `/stock-movements?before=${c.ledgerBeforeId}`),
  },
  // Extra: a type filter reads the ledger back by id until it has a page of that type; the seeded
  // ledger is written in rounds (every item's 6th to 10th movements are the newest, none of them an
  // adjustment), so this measures that layout (half the ledger read at either size) more than the service.
  {
    name: 'ledger-filtered',
    label: 'GET /stock-movements?type=adjustment',
    path: () => '/stock-movements?type=adjustment',
    extra: true,
  },
  { name: 'movements-api', label: 'GET /api/stock-movements', path: () => '/api/stock-movements' },
  { name: 'items-1000', label: 'GET /api/items?page=1000', path: () => '/api/items?page=1000' },
  { name: 'items', label: 'GET /api/items', path: () => '/api/items' },
  { name: 'items-search', label: 'GET /api/items?search=flask', path: () => '/api/items?search=flask' },
  { name: 'item', label: 'GET /api/items/{id}', path: (c) => `/api/items/${c.itemId}` },
  {
    name: 'item-movements',
    label: 'GET /api/items/{id}/stock-movements',
    path: (c) => `/api/items/${c.itemId}/stock-movements`,
  },
  { name: 'sales', label: 'GET /api/sales', path: () => '/api/sales' },
  { name: 'sales-2000', label: 'GET /api/sales?page=2000', path: () => '/api/sales?page=2000' },
  { name: 'reports', label: 'GET /api/sales/reports', path: () => '/api/sales/reports' },
  { name: 'items-page', label: 'GET /items (the items page)', path: () => '/items' },
  { name: 'sales-page', label: 'GET /sales (the sales page)', path: () => '/sales' },
  { name: 'stocktakes', label: 'GET /api/stocktakes', path: () => '/api/stocktakes' },
  {
    name: 'stocktake',
    label: 'GET /api/stocktakes/{id} (10 lines)',
    path: (c) => (c.stocktakeId === null ? null : `/api/stocktakes/${c.stocktakeId}`),
  },
  // issue 42: the lots list and the dashboard's expiry figures
  {
    name: 'lots-expiring',
    label: 'GET /api/lots?status=expiring',
    path: () => '/api/lots?status=expiring',
  },
  { name: 'lot-expiry', label: 'GET /api/dashboard/lot-expiry', path: () => '/api/dashboard/lot-expiry' },
];

function option(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

const seconds = (t0: number) => ((performance.now() - t0) / 1000).toFixed(1);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/**
 * Items g in [from, to] with their ten movements each, as the API would have written them: an
 * opening 'in', then out 2 / in 1 in turn (the fifth an adjustment), so each item ends 6 below its
 * opening stock and its current_stock is its last movement's new_stock.
 */
async function seedItems(db: Knex, adminId: string, from: number, to: number): Promise<void> {
  if (from === 1) {
    await db.raw(
      `INSERT INTO categories (name, description, icon, color)
       SELECT 'Scale category ' || g, 'Benchmark category', 'fa-box', 'blue' FROM generate_series(1, ?) g`,
      [CATEGORIES],
    );
  }
  const firstNew = Number((await db.raw(`SELECT coalesce(max(id), 0) + 1 AS id FROM items`)).rows[0].id);
  // 100 out of stock (0) and 100 low (2, minimum 5), all among the first 50,000: the same at 10x
  await db.raw(
    `INSERT INTO items (name, sku, description, category_id, price, current_stock, minimum_stock, created_by, created_at, updated_at, tracking)
     SELECT (?::text[])[1 + g % 20] || ' ' || g, 'SCALE-' || lpad(g::text, 7, '0'), 'Benchmark item number ' || g || ', lot ' || (g % 997),
            (SELECT min(id) FROM categories WHERE name LIKE 'Scale category %') + g % ?, round((1 + (g % 500) * 0.37)::numeric, 2),
            CASE WHEN g <= ? AND g % 500 = 0 THEN 0 WHEN g <= ? AND g % 500 = 250 THEN 2 ELSE 94 + g % 50 END,
            CASE WHEN g <= ? AND g % 500 IN (0, 250) THEN 5 ELSE g % 20 END,
            ?, now() - interval '730 days', now() - interval '1 day', CASE WHEN g % ? = 0 THEN 'lot' ELSE 'none' END
       FROM generate_series(?::int, ?::int) g ORDER BY g`,
    [WORDS, CATEGORIES, BASE_ITEMS, BASE_ITEMS, BASE_ITEMS, adminId, TRACKED_EVERY, from, to],
  );
  // one statement per round of movements, so the ledger's ids run round by round across the items
  for (let n = 1; n <= MOVEMENTS_PER_ITEM; n++) {
    await withoutForeignKeyChecks(db, (trx) =>
      trx.raw(
        `INSERT INTO stock_movements (item_id, item_name, item_sku, type, quantity, previous_stock, new_stock, reason,
                                    reference_type, reference_id, performed_by, created_at)
       SELECT i.id, i.name, i.sku,
              CASE WHEN :n = 1 THEN 'in' WHEN :n % 2 = 0 THEN 'out' WHEN :n = 5 THEN 'adjustment' ELSE 'in' END,
              CASE WHEN :n = 1 THEN i.current_stock + 6 WHEN :n % 2 = 0 THEN -2 ELSE 1 END,
              CASE WHEN :n = 1 THEN 0 WHEN :n = 2 THEN i.current_stock + 6
                   ELSE i.current_stock + 6 - 2 * ((:n - 1) / 2) + (:n - 2) / 2 END,
              CASE WHEN :n = 1 THEN i.current_stock + 6 ELSE i.current_stock + 6 - 2 * (:n / 2) + (:n - 1) / 2 END,
              CASE WHEN :n = 1 THEN 'Initial stock' WHEN :n % 2 = 0 THEN 'Sale' WHEN :n = 5 THEN 'Stock count' ELSE 'Order received' END,
              CASE WHEN :n > 1 AND :n % 2 = 0 THEN 'sale' WHEN :n > 1 AND :n <> 5 THEN 'order' END,
              CASE WHEN :n > 1 AND :n % 2 = 0 THEN 'SALE-SCALE-' || i.id WHEN :n > 1 AND :n <> 5 THEN 'O' || (1000 + i.id % 5000) END,
              i.created_by,
              now() - interval '730 days' + (:n - 1) * interval '70 days' + (i.id % 86400) * interval '1 second'
         FROM items i WHERE i.id >= :firstNew ORDER BY i.id`,
        { n, firstNew },
      ),
    );
  }
  await seedLots(db, firstNew);
}

/**
 * Issue 42: the lots of the tracked items from `firstNew` on, LOTS_PER_ITEM each, as receipts over
 * two years leave them: the older lots run out (empty, their dates past), the newest two hold the
 * item's stock (their sum is its current_stock) and expire 200 to 1,000 days on. A fixed 100 lots
 * are expiring (within 30 days) and 50 expired still holding stock, among the first 50,000 items: the
 * same at 10x (the few lots that matter do not grow with the catalogue).
 */
async function seedLots(db: Knex, firstNew: number): Promise<void> {
  const firstItem = Number((await db.raw(`SELECT min(id) AS id FROM items`)).rows[0].id);
  await withoutForeignKeyChecks(db, (trx) =>
    trx.raw(
      `INSERT INTO stock_lots (item_id, lot_number, expires_on, quantity, received_at, created_at)
       SELECT i.id, 'L' || i.id || '-' || k,
              CASE WHEN k < :lots - 1 THEN current_date - (:lots - 1 - k) * 80 + 60
                   WHEN k = :lots - 1 AND i.id - :firstItem < :base AND (i.id - :firstItem) % 500 = 5
                     THEN current_date + ((i.id - :firstItem) / 500) % 30
                   WHEN k = :lots - 1 AND i.id - :firstItem < :base AND (i.id - :firstItem) % 1000 = 10
                     THEN current_date - 1 - ((i.id - :firstItem) / 1000) % 60
                   ELSE current_date + 200 * (k - :lots + 2) + 200 + i.id % 600 END,
              CASE WHEN k < :lots - 1 THEN 0 WHEN k = :lots - 1 THEN floor(i.current_stock / 2)
                   ELSE i.current_stock - floor(i.current_stock / 2) END,
              now() - (:lots - k) * interval '70 days', now() - (:lots - k) * interval '70 days'
         FROM items i CROSS JOIN generate_series(1, :lots) k
        WHERE i.id >= :firstNew AND i.tracking = 'lot' ORDER BY i.id, k`,
      { lots: LOTS_PER_ITEM, firstItem, base: BASE_ITEMS, firstNew },
    ),
  );
}

/**
 * Runs a seeding statement with the foreign-key triggers off (session_replication_role = replica,
 * the embedded cluster's user is its superuser): only for stock_movements and sale_items, whose
 * rows name items, sales and users just read from their tables and which have no other trigger on
 * insert, so nothing the triggers keep is skipped. Millions of row-by-row key checks are most of
 * the 10x seeding's time otherwise.
 */
async function withoutForeignKeyChecks(db: Knex, statement: (trx: Knex.Transaction) => Promise<unknown>) {
  await db.transaction(async (trx) => {
    await trx.raw(`SET LOCAL session_replication_role = replica`);
    await statement(trx);
  });
}

/** Sales g in [from, to], 1-3 lines of one unit each over the items, totals the sum of their lines. */
async function seedSales(db: Knex, adminId: string, from: number, to: number): Promise<void> {
  if (from === 1) {
    await db.raw(
      `INSERT INTO charge_codes (code, title, cost_centre, valid_from, valid_until, authorised_by)
       SELECT 'SCALE-00' || g, 'Scale budget ' || g, (ARRAY['Chemistry', 'Physics', 'Biology', 'Engineering', 'Maths'])[g],
              now() - interval '800 days', now() + interval '400 days', ? FROM generate_series(1, 5) g`,
      [adminId],
    );
  }
  const lastId = Number((await db.raw(`SELECT coalesce(max(id), 0) AS id FROM sales`)).rows[0].id);
  await db.raw(
    `INSERT INTO sales (sale_id, charge_code, subtotal_amount, vat_amount, total_amount, status, is_paid, processed_by,
                        customer_notes, created_at, updated_at)
     SELECT 'SALE-SCALE-' || lpad(g::text, 7, '0'), 'SCALE-00' || (1 + g % 5),
            10 * (1 + g % 3), 2 * (1 + g % 3), 12 * (1 + g % 3),
            CASE WHEN g % 3 = 0 THEN 'paid' ELSE 'completed' END, g % 3 = 0, ?,
            CASE WHEN g % 10 = 0 THEN 'Seeded sale, note ' || g END,
            now() - interval '730 days' + (g::double precision / ?) * interval '729 days', now()
       FROM generate_series(?::int, ?::int) g ORDER BY g`,
    [adminId, to, from, to],
  );
  await withoutForeignKeyChecks(db, (trx) =>
    trx.raw(
      `INSERT INTO sale_items (sale_id, item_id, item_name, item_sku, quantity, unit_price, vat_rate, vat_amount, subtotal, total_with_vat)
     SELECT s.id, i.id, i.name, i.sku, 1, 10, 0.2, 2, 10, 12
       FROM sales s
       CROSS JOIN generate_series(1, 1 + s.id % 3) k
       JOIN items i ON i.id = (SELECT min(id) FROM items) + (s.id * 31 + k * 7919) % (SELECT count(*) FROM items)
      WHERE s.id > ? ORDER BY s.id, k`,
      [lastId],
    ),
  );
}

/** A connection to the bench's database without the service's 30 s statement timeout, for seeding. */
function seedingDb(server: BenchServer): Knex {
  const { connectionString } = (server.db.client as { config: { connection: { connectionString: string } } }).config
    .connection;
  const config = knexConfig(connectionString, 1);
  return knex({ ...config, connection: { connectionString, options: '-c statement_timeout=0' } });
}

/** Seeds up to `items` items and `sales` sales (adding to what is there); prints the time taken. */
async function seedTo(server: BenchServer, adminId: string, items: number, sales: number): Promise<void> {
  const db = seedingDb(server);
  try {
    await seedWith(db, adminId, items, sales);
  } finally {
    await db.destroy();
  }
}

async function seedWith(db: Knex, adminId: string, items: number, sales: number): Promise<void> {
  const [{ count: haveItems }] = (await db.raw(`SELECT count(*)::int AS count FROM items`)).rows;
  const [{ count: haveSales }] = (await db.raw(`SELECT count(*)::int AS count FROM sales`)).rows;
  const t0 = performance.now();
  await seedItems(db, adminId, haveItems + 1, items);
  const t1 = performance.now();
  await seedSales(db, adminId, haveSales + 1, sales);
  const t2 = performance.now();
  await db.raw('VACUUM ANALYZE');
  // write the seeded pages out now rather than in a checkpoint during the measurements
  await db.raw('CHECKPOINT').catch(() => undefined);
  const counts = (
    await db.raw(`SELECT (SELECT count(*) FROM items)::int AS items, (SELECT count(*) FROM stock_movements)::int AS movements,
                         (SELECT count(*) FROM sales)::int AS sales, (SELECT count(*) FROM sale_items)::int AS lines,
                         (SELECT count(*) FROM stock_lots)::int AS lots,
                         (SELECT count(*) FROM stock_lots WHERE quantity > 0)::int AS holding`)
  ).rows[0];
  console.log(
    `seeded to ${counts.items} items, ${counts.movements} movements, ${counts.sales} sales (${counts.lines} lines), ` +
      `${counts.lots} lots (${counts.holding} holding stock): ` +
      `items and movements ${((t1 - t0) / 1000).toFixed(1)} s, sales ${((t2 - t1) / 1000).toFixed(1)} s, vacuum ${seconds(t2)} s`,
  );
}

/** The seeded data keeps the ledger's rule: every item's stock is its last movement's new stock. */
async function checkLedger(db: Knex): Promise<void> {
  const [{ mismatched }] = (
    await db.raw(`SELECT count(*)::int AS mismatched FROM items i
       WHERE i.current_stock <> coalesce((SELECT m.new_stock FROM stock_movements m WHERE m.item_id = i.id ORDER BY m.id DESC LIMIT 1), 0)`)
  ).rows;
  if (mismatched > 0) throw new Error(`seeding left ${mismatched} items out of line with the ledger`);
  const [{ lotsOff }] = (
    await db.raw(`SELECT count(*)::int AS "lotsOff" FROM items i WHERE i.tracking = 'lot'
       AND i.current_stock <> (SELECT coalesce(sum(l.quantity), 0) FROM stock_lots l WHERE l.item_id = i.id)`)
  ).rows;
  if (lotsOff > 0) throw new Error(`seeding left ${lotsOff} tracked items whose lots do not add up to their stock`);
}

/** cpu: the server's CPU (node and its PostgreSQL) per measured request, ms: a figure the machine's other load barely moves. */
type Figure = { median: number; p95: number; cpu: number; status: number; bytes: number };

async function measure(server: BenchServer, cookie: string, path: string, requests: number): Promise<Figure> {
  const times: number[] = [];
  let status = 0;
  let bytes = 0;
  let pids: number[] = [];
  let cpuBefore = { node: 0, pg: 0 };
  for (let i = 0; i < WARMUP + requests; i++) {
    if (i === WARMUP) {
      // the backends the pool holds now serve the measured requests
      pids = processTree(server.pid);
      cpuBefore = cpuMs(pids);
    }
    const t0 = performance.now();
    const res = await fetch(`${server.baseUrl}${path}`, { headers: { cookie } });
    bytes = (await res.arrayBuffer()).byteLength;
    const ms = performance.now() - t0;
    status = res.status;
    if (status !== 200) throw new Error(`${path}: ${status}`);
    if (i >= WARMUP) times.push(ms);
  }
  const cpuAfter = cpuMs(pids);
  const cpu = (cpuAfter.node - cpuBefore.node + cpuAfter.pg - cpuBefore.pg) / requests;
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)];
  return { median: at(0.5), p95: at(0.95), cpu, status, bytes };
}

async function context(server: BenchServer, cookie: string): Promise<Context> {
  const { db } = server;
  const [{ id: itemId }] = (await db.raw(`SELECT id FROM items ORDER BY id OFFSET 25000 LIMIT 1`)).rows;
  const [ledger] = (await db.raw(`SELECT id FROM stock_movements ORDER BY id DESC OFFSET 100000 LIMIT 1`)).rows;
  let stocktakeId: number | null = null;
  const existing = (await db.raw(`SELECT id FROM stocktakes ORDER BY id LIMIT 1`)).rows[0];
  if (existing) stocktakeId = existing.id;
  else {
    const itemIds: number[] = await db('items').orderBy('id').limit(10).pluck('id');
    const res = await fetch(`${server.baseUrl}/api/stocktakes`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Scale benchmark count', scope: { itemIds } }),
    });
    if (res.status === 201) stocktakeId = ((await res.json()) as { id: number }).id;
    else console.log(`(no stocktake: POST /api/stocktakes answered ${res.status})`);
  }
  return { itemId, ledgerBeforeId: ledger?.id ?? null, stocktakeId };
}

const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

export async function run(): Promise<void> {
  const size = option('size') ?? 'both';
  if (!['1x', '10x', 'both'].includes(size)) throw new Error('--size is 1x, 10x or both');
  const requests = Number(option('requests') ?? 30);
  const wanted = option('endpoints')?.split(',');
  const unknown = wanted?.filter((w) => !ENDPOINTS.some((e) => e.name === w)) ?? [];
  if (unknown.length > 0)
    throw new Error(`unknown endpoints ${unknown.join(', ')}; known: ${ENDPOINTS.map((e) => e.name).join(', ')}`);
  const endpoints = wanted ? ENDPOINTS.filter((e) => wanted.includes(e.name)) : ENDPOINTS.filter((e) => !e.extra);
  const sizes = size === 'both' ? ['1x', '10x'] : [size];

  const server = await startBenchServer();
  try {
    const admin = await server.db('users').where({ email: BENCH_ADMIN.email }).first('id');
    const results = new Map<string, Map<string, Figure | null>>();
    for (const s of sizes) {
      const factor = s === '1x' ? 1 : 10;
      console.log(`\n## ${s}: seeding (machine load average ${load()})`);
      await seedTo(server, admin.id, BASE_ITEMS * factor, BASE_SALES * factor);
      const check = seedingDb(server);
      await checkLedger(check).finally(() => check.destroy());
      const cookie = await server.login(BENCH_ADMIN.email, BENCH_ADMIN.password);
      const ctx = await context(server, cookie);
      console.log(`## ${s}: ${requests} sequential requests each (machine load average ${load()})`);
      const figures = new Map<string, Figure | null>();
      for (const e of endpoints) {
        const path = e.path(ctx);
        const label = e.label;
        const figure = path === null ? null : await measure(server, cookie, path, requests);
        figures.set(e.name, figure);
        console.log(
          `  ${e.name.padEnd(16)} ${label.padEnd(46)} ${figure ? `median ${ms(figure.median)} ms, p95 ${ms(figure.p95)} ms, server CPU ${ms(figure.cpu)} ms (${Math.round(figure.bytes / 1024)} KB)` : 'n/a'}`,
        );
      }
      results.set(s, figures);
    }

    if (sizes.length === 2) {
      console.log(`\n## growth from 1x to 10x (median; bound x${GROWTH_BOUND}); machine load average ${load()}`);
      console.log(`  ${'endpoint'.padEnd(46)} ${'1x'.padStart(10)} ${'10x'.padStart(10)} ${'growth'.padStart(8)}`);
      // (a scheduled job that runs during a measurement, such as the ledger check, adds its CPU to that row)
      for (const e of endpoints) {
        const [one, ten] = [results.get('1x')!.get(e.name), results.get('10x')!.get(e.name)];
        if (!one || !ten) continue;
        const growth = ten.median / one.median;
        console.log(
          `  ${e.label.padEnd(46)} ${`${ms(one.median)} ms`.padStart(10)} ${`${ms(ten.median)} ms`.padStart(10)} ${`x${growth.toFixed(2)}`.padStart(8)}  ${(growth <= GROWTH_BOUND ? 'met' : 'MISSED').padEnd(6)}  (p95 ${ms(one.p95)} / ${ms(ten.p95)} ms; server CPU ${ms(one.cpu)} / ${ms(ten.cpu)} ms)`,
        );
      }
      console.log('');
      for (const e of endpoints) {
        const [one, ten] = [results.get('1x')!.get(e.name), results.get('10x')!.get(e.name)];
        if (one && ten)
          checkTarget(`${e.label}: growth 1x -> 10x`, Number((ten.median / one.median).toFixed(2)), 'x', {
            atMost: GROWTH_BOUND,
          });
      }
    }
    const dashboard = results.get(sizes.at(-1)!)!.get('dashboard');
    if (dashboard && sizes.includes('10x'))
      checkTarget('GET / (the dashboard page) at 10x, median', Number(ms(dashboard.median)), 'ms', {
        atMost: DASHBOARD_BOUND_MS,
      });
  } finally {
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
