// Sales benchmark: quote save + process end to end under 20 concurrent sessions on 200 items
// stocked so the run never empties them (sales/s, latency), then every session on 3 scarce items
// until they run out (nothing oversold), a ledger check of both phases (stock = initial - sold,
// movements match lines), then the
// sales report over 100,000 sales as a JSON page and as a streamed CSV (server peak RSS).
import { readdirSync, readFileSync } from 'node:fs';
import {
  BENCH_ADMIN,
  checkTarget,
  percentile,
  report,
  round,
  runLoad,
  sampleRss,
  sellThroughQuotes,
  startBenchServer,
  type BenchServer,
  type QuoteSales,
} from './lib';

const SESSIONS = 20;
const ITEMS = 200;
const INITIAL_STOCK = 1000;
const HOT_ITEMS = 3;
const HOT_STOCK = 20;
const FLOW_SECONDS = 15;
const HOT_SECONDS = 5;
const REPORT_SALES = 100_000;
export const CHARGE_CODE = 'BENCH-001';

/** CPU seconds (user + system) a process has used so far; the figure does not depend on what else loads the machine. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds of the bench's PostgreSQL: its postmaster (found by port) and every backend under it. */
function postgresCpuSeconds(server: BenchServer): number {
  const { connectionString } = (server.db.client as { config: { connection: { connectionString: string } } }).config
    .connection;
  const port = new URL(connectionString).port;
  let total = 0;
  let postmaster: string | undefined;
  const procs = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  for (const pid of procs) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (cmd[0].endsWith('postgres') && cmd.includes('-p') && cmd[cmd.indexOf('-p') + 1] === port) postmaster = pid;
    } catch {
      // gone
    }
  }
  if (!postmaster) return 0;
  for (const pid of procs) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      // The postmaster also carries the CPU of its children that have exited (cutime, cstime).
      if (pid === postmaster)
        total += (Number(stat[11]) + Number(stat[12]) + Number(stat[13]) + Number(stat[14])) / 100;
      else if (stat[1] === postmaster) total += (Number(stat[11]) + Number(stat[12])) / 100;
    } catch {
      // gone
    }
  }
  return total;
}

const rssMb = (pid: number) =>
  Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024);

export async function seedCatalogue(server: Pick<BenchServer, 'db'>) {
  const { db } = server;
  const [category] = await db('categories').insert({ name: 'Bench category', color: 'blue' }).returning('id');
  const admin = await db('users').where({ email: BENCH_ADMIN.email }).first('id');
  await db('items').insert(
    Array.from({ length: ITEMS + HOT_ITEMS }, (_, i) => ({
      name: `Bench item ${i + 1}`,
      sku: `BENCH-${String(i + 1).padStart(4, '0')}`,
      category_id: category.id,
      price: (1 + (i % 50) * 0.37).toFixed(2),
      current_stock: i < ITEMS ? INITIAL_STOCK : HOT_STOCK,
      created_by: admin.id,
    })),
  );
  const codes = ['BENCH-001', 'BENCH-002', 'BENCH-003', 'BENCH-004', 'BENCH-005'];
  await db('charge_codes').insert(
    codes.map((code, i) => ({
      code,
      title: `Bench budget ${i + 1}`,
      cost_centre: ['Chemistry', 'Physics', 'Biology', 'Engineering', 'Maths'][i],
      valid_from: new Date(Date.now() - 400 * 86_400_000),
      valid_until: new Date(Date.now() + 400 * 86_400_000),
      authorised_by: admin.id,
    })),
  );
  const ids: number[] = await db('items').orderBy('id').pluck('id');
  return { ids: ids.slice(0, ITEMS), hotIds: ids.slice(ITEMS), adminId: admin.id as string };
}

type FlowFigures = QuoteSales & { serverCpu: number; pgCpu: number; clientCpu: number };

/** sellThroughQuotes on the bench server, with the CPU the server, PostgreSQL and this process spent. */
async function runFlow(
  server: BenchServer,
  cookies: string[],
  itemIds: number[],
  seconds: number,
  tag: string,
): Promise<FlowFigures> {
  const cpuBefore = cpuSeconds(server.pid);
  const pgBefore = postgresCpuSeconds(server);
  const clientBefore = cpuSeconds(process.pid);
  const sold = await sellThroughQuotes({
    baseUrl: server.baseUrl,
    cookies,
    itemIds,
    chargeCode: CHARGE_CODE,
    seconds,
    tag,
  });
  return {
    ...sold,
    serverCpu: cpuSeconds(server.pid) - cpuBefore,
    pgCpu: postgresCpuSeconds(server) - pgBefore,
    clientCpu: cpuSeconds(process.pid) - clientBefore,
  };
}

async function salesFlow(server: BenchServer, itemIds: number[], hotIds: number[]) {
  const cookies = await Promise.all(
    Array.from({ length: SESSIONS }, () => server.login(BENCH_ADMIN.email, BENCH_ADMIN.password)),
  );
  const main = await runFlow(server, cookies, itemIds, FLOW_SECONDS, 'all');
  // Then every session on the same few scarce items until their stock runs out: the oversell test under load.
  const hot = await runFlow(server, cookies, hotIds, HOT_SECONDS, 'hot');
  const { processed, refusedForStock, failures, elapsed, serverCpu, pgCpu, clientCpu } = main;
  const [cycle, saveLatency, processLatency] = [main.cycle, main.save, main.process];

  // Verification straight from the database.
  const { db } = server;
  const [{ oversold }] = await db
    .raw(
      `SELECT count(*)::int AS oversold FROM items i
       LEFT JOIN (SELECT item_id, sum(quantity) AS sold FROM sale_items GROUP BY item_id) s ON s.item_id = i.id
      WHERE i.current_stock < 0 OR i.current_stock <> (CASE WHEN i.id = ANY(?::int[]) THEN ?::numeric ELSE ?::numeric END) - coalesce(s.sold, 0)`,
      [hotIds, HOT_STOCK, INITIAL_STOCK],
    )
    .then((r: { rows: { oversold: number }[] }) => r.rows);
  const flowSales = `sale_id NOT LIKE 'SALE-BULK-%'`;
  const [{ lines }] = (
    await db.raw(
      `SELECT count(*)::int AS lines FROM sale_items WHERE sale_id IN (SELECT id FROM sales WHERE ${flowSales})`,
    )
  ).rows;
  const [{ movements, mismatched }] = (
    await db.raw(
      `SELECT count(*)::int AS movements,
              (SELECT count(*)::int FROM sales s WHERE s.${flowSales} AND
                 (SELECT count(*) FROM sale_items si WHERE si.sale_id = s.id) <>
                 (SELECT count(*) FROM stock_movements m WHERE m.reference_type = 'sale' AND m.reference_id = s.sale_id AND m.type = 'out')) AS mismatched
         FROM stock_movements WHERE reference_type = 'sale' AND type = 'out'`,
    )
  ).rows;
  const [{ sales }] = (await db.raw(`SELECT count(*)::int AS sales FROM sales WHERE ${flowSales}`)).rows;
  const hotStock: string[] = await db('items').whereIn('id', hotIds).orderBy('id').pluck('current_stock');

  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const [c, s, p] = [sorted(cycle), sorted(saveLatency), sorted(processLatency)];
  report(
    `Quote save + process, ${SESSIONS} concurrent sessions, ${ITEMS} items (stock ${INITIAL_STOCK} each), ${FLOW_SECONDS} s`,
    {
      'processed sales/s': round(processed / elapsed),
      'sales processed': processed,
      'refused: insufficient stock': refusedForStock,
      'other failures': failures,
      'cycle p50 / p99 ms': `${round(percentile(c, 50))} / ${round(percentile(c, 99))}`,
      'save p50 / p99 ms': `${round(percentile(s, 50))} / ${round(percentile(s, 99))}`,
      'process p50 / p99 ms': `${round(percentile(p, 50))} / ${round(percentile(p, 99))}`,
      'server CPU ms per sale': round((serverCpu * 1000) / Math.max(processed, 1)),
      'PostgreSQL CPU ms per sale': round((pgCpu * 1000) / Math.max(processed, 1)),
      'load generator CPU ms per sale': round((clientCpu * 1000) / Math.max(processed, 1)),
      'load average (1 min)': readFileSync('/proc/loadavg', 'utf8').split(' ')[0],
      'items oversold or off-ledger': oversold,
      [`${HOT_ITEMS} hot items (stock ${HOT_STOCK} each), ${HOT_SECONDS} s: sold / refused / other`]: `${hot.processed} / ${hot.refusedForStock} / ${hot.failures}`,
      'hot items stock left': hotStock.join(', '),
      'failure messages': [...main.failureSamples, ...hot.failureSamples].slice(0, 3).join(' | ') || 'none',
      'sales / lines / movements': `${sales} / ${lines} / ${movements}`,
      'sales whose movements != lines': mismatched,
      verdict:
        oversold === 0 && mismatched === 0 && lines === movements && sales === processed + hot.processed
          ? 'OK: zero oversell, movements == lines'
          : 'FAILED: ledger check',
      target:
        processed / elapsed >= 150 && percentile(p, 99) < 250
          ? 'met: >= 150 sales/s, process p99 < 250 ms'
          : 'NOT met: >= 150 sales/s with process p99 < 250 ms',
    },
  );
  return { processed };
}

export async function seedSales(server: Pick<BenchServer, 'db'>, adminId: string) {
  const { db } = server;
  const t0 = Date.now();
  await db.raw(
    `INSERT INTO sales (sale_id, charge_code, subtotal_amount, vat_amount, total_amount, status, is_paid, processed_by, customer_notes, created_at, updated_at)
     SELECT 'SALE-BULK-' || g,
            'BENCH-00' || (1 + g % 5),
            (10 + g % 90)::numeric(14,2),
            ((10 + g % 90) * 0.2)::numeric(14,2),
            ((10 + g % 90) * 1.2)::numeric(14,2),
            CASE WHEN g % 3 = 0 THEN 'paid' ELSE 'completed' END,
            g % 3 = 0,
            ?,
            CASE WHEN g % 10 = 0 THEN 'Seeded sale, note ' || g ELSE NULL END,
            now() - (g % 365) * interval '1 day' - (g % 86400) * interval '1 second',
            now()
       FROM generate_series(1, ?) AS g`,
    [adminId, REPORT_SALES],
  );
  await db.raw(
    `INSERT INTO sale_items (sale_id, item_id, item_name, item_sku, quantity, unit_price, vat_rate, vat_amount, subtotal, total_with_vat)
     SELECT s.id, NULL, 'Archived item ' || (s.id % 50), 'ARCH-' || (s.id % 50), 1 + s.id % 3, s.subtotal_amount, 0.2, s.vat_amount, s.subtotal_amount, s.total_amount
       FROM sales s CROSS JOIN generate_series(1, 1 + (s.id % 3)) AS n
      WHERE s.sale_id LIKE 'SALE-BULK-%'`,
  );
  await db.raw('ANALYZE sales; ANALYZE sale_items');
  return (Date.now() - t0) / 1000;
}

async function reportsBench(server: BenchServer, adminId: string) {
  const seconds = await seedSales(server, adminId);
  const [{ total }] = (await server.db.raw('SELECT count(*)::int AS total FROM sales')).rows;
  const cookie = await server.login(BENCH_ADMIN.email, BENCH_ADMIN.password);

  const rssBefore = rssMb(server.pid);
  const rss = sampleRss(server.pid);
  const t0 = Date.now();
  const res = await fetch(`${server.baseUrl}/api/sales/reports?format=csv`, { headers: { cookie } });
  let bytes = 0;
  let newlines = 0;
  const reader = res.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    for (const b of value) if (b === 10) newlines += 1;
  }
  const elapsed = (Date.now() - t0) / 1000;
  const peak = rss.stop();
  report(`GET /api/sales/reports?format=csv over ${total} sales`, {
    status: res.status,
    'data rows': newlines - 1,
    'size MB': round(bytes / 1024 / 1024),
    seconds: round(elapsed),
    'server RSS before MB': rssBefore,
    'server peak RSS MB': peak,
    'RSS added by the CSV MB': peak - rssBefore,
    verdict:
      newlines - 1 !== total
        ? 'FAILED: rows missing'
        : peak < 250
          ? 'OK: every sale, peak RSS < 250 MB'
          : `every sale; peak RSS over 250 MB, of which the idle server already holds ${rssBefore} MB`,
  });

  // CPU per request (server and PostgreSQL) does not depend on what else loads the machine, unlike req/s.
  const measured = async (path: string, duration: number) => {
    const [serverBefore, pgBefore] = [cpuSeconds(server.pid), postgresCpuSeconds(server)];
    const load = await runLoad({ url: `${server.baseUrl}${path}`, headers: { cookie }, connections: 10, duration });
    const perRequest = (seconds: number) => round((seconds * 1000) / Math.max(load.total, 1));
    return {
      ...load,
      serverCpu: perRequest(cpuSeconds(server.pid) - serverBefore),
      pgCpu: perRequest(postgresCpuSeconds(server) - pgBefore),
    };
  };
  const page = await measured('/api/sales/reports?page=1&limit=50', 8);
  const filtered = await measured('/api/sales/reports?page=20&limit=100&chargeCode=bench-003&unpaidOnly=true', 6);
  report(`GET /api/sales/reports JSON over ${total} sales (seeded in ${round(seconds)} s), 10 connections`, {
    'page 1 req/s': page.requestsPerSecond,
    'page 1 p50 / p99 ms': `${page.p50} / ${page.p99}`,
    'page 1 CPU ms per request: server / PostgreSQL': `${page.serverCpu} / ${page.pgCpu}`,
    'filtered page 20 req/s': filtered.requestsPerSecond,
    'filtered p50 / p99 ms': `${filtered.p50} / ${filtered.p99}`,
    'filtered CPU ms per request: server / PostgreSQL': `${filtered.serverCpu} / ${filtered.pgCpu}`,
    'errors / non-2xx': `${page.errors + filtered.errors} / ${page.non2xx + filtered.non2xx}`,
  });
  checkTarget('GET /api/sales/reports JSON page 1, 10 connections', page.requestsPerSecond, 'req/s', { atLeast: 300 });
  checkTarget('GET /api/sales/reports JSON page 1 p99', page.p99, 'ms', { atMost: 60 });
  checkTarget('GET /api/sales/reports filtered page 20, 10 connections', filtered.requestsPerSecond, 'req/s', {
    atLeast: 200,
  });
  checkTarget('GET /api/sales/reports filtered page 20 p99', filtered.p99, 'ms', { atMost: 80 });
}

export async function run(): Promise<void> {
  const server = await startBenchServer();
  try {
    const { ids, hotIds, adminId } = await seedCatalogue(server);
    // Reports first, on a fresh server process, so the CSV's peak RSS is not inflated by the heap of the load phase.
    // SALES_BENCH_PARTS=flow or =reports runs one half (for profiling).
    const parts = process.env.SALES_BENCH_PARTS ?? 'reports,flow';
    if (parts.includes('reports')) await reportsBench(server, adminId);
    if (parts.includes('flow')) await salesFlow(server, ids, hotIds);
  } finally {
    await server.stop();
  }
}
