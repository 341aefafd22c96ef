// Operations benchmark on a database of 50,000 items and 100,000 sales: a backup (pg_dump does
// the work; the server only streams its output to a file), a restore of that backup over a
// changed database, and an archive of every sale, order and movement, with the server's peak RSS
// during each (targets: backup < 15 s with RSS growing < 50 MB, restore < 60 s, archive RSS < 250 MB).
import { readFileSync } from 'node:fs';
import { BENCH_ADMIN, report, sampleRss, startBenchServer, type BenchServer } from './lib';
import { seedItems } from './inventory';
import { seedCatalogue, seedSales } from './sales';

const rssMb = (pid: number) =>
  Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024);
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function timedPost(server: BenchServer, cookie: string, path: string, body?: unknown) {
  const rssBefore = rssMb(server.pid);
  const rss = sampleRss(server.pid);
  const t0 = performance.now();
  const res = await fetch(`${server.baseUrl}${path}`, {
    method: 'POST',
    headers: body ? { cookie, 'content-type': 'application/json' } : { cookie },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as Record<string, unknown>;
  const seconds = (performance.now() - t0) / 1000;
  const peak = rss.stop();
  if (!res.ok) throw new Error(`POST ${path} answered ${res.status}: ${JSON.stringify(json)}`);
  return { json, seconds: seconds.toFixed(1), rssBefore, peak };
}

const count = async (server: BenchServer, table: string) =>
  Number((await server.db(table).count({ n: '*' }).first())!.n);

export async function run(): Promise<void> {
  const server = await startBenchServer();
  try {
    const t0 = performance.now();
    await seedItems(server);
    const { adminId } = await seedCatalogue(server);
    await seedSales(server, adminId);
    const before = {
      items: await count(server, 'items'),
      sales: await count(server, 'sales'),
      lines: await count(server, 'sale_items'),
    };
    console.log(
      `seeded ${before.items} items, ${before.sales} sales, ${before.lines} sale lines in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    let cookie = await server.login(BENCH_ADMIN.email, BENCH_ADMIN.password);

    const backup = await timedPost(server, cookie, '/api/backups');
    report('POST /api/backups (pg_dump --format=custom)', {
      seconds: backup.seconds,
      'file size': mb(Number(backup.json.size)),
      'server RSS before / peak MB': `${backup.rssBefore} / ${backup.peak}`,
      'server RSS growth MB': backup.peak - backup.rssBefore,
    });

    // Something to undo: a tenth of the sales gone, and a table the backup never had.
    await server.db.raw(`DELETE FROM sales WHERE id % 10 = 0`);
    await server.db.raw('CREATE TABLE bench_after_backup (id int)');
    const restore = await timedPost(server, cookie, `/api/backups/${backup.json.filename}/restore`);
    const after = {
      items: await count(server, 'items'),
      sales: await count(server, 'sales'),
      lines: await count(server, 'sale_items'),
    };
    const strayTable = (await server.db.raw(`SELECT to_regclass('public.bench_after_backup') AS t`)).rows[0].t;
    const health = (await (await fetch(`${server.baseUrl}/api/health`)).json()) as { database: string };
    report(`POST /api/backups/{filename}/restore (over ${before.sales / 10} deleted sales and a new table)`, {
      seconds: restore.seconds,
      'server RSS before / peak MB': `${restore.rssBefore} / ${restore.peak}`,
      'rows back as at the backup':
        JSON.stringify(after) === JSON.stringify(before)
          ? `yes (${after.sales} sales, ${after.lines} lines)`
          : `NO: ${JSON.stringify(after)}`,
      'table created after backup': strayTable ? 'still there (WRONG)' : 'gone',
      '/api/health database': health.database,
    });

    cookie = await server.login(BENCH_ADMIN.email, BENCH_ADMIN.password);
    const archive = await timedPost(server, cookie, '/api/archives/create', {
      ageThresholdDays: 0,
      includeRecordTypes: ['sales', 'orders', 'stock_movements'],
    });
    report('POST /api/archives/create (every sale, order and movement, gzip JSON lines)', {
      seconds: archive.seconds,
      records: JSON.stringify(archive.json.recordsArchived),
      'file size': mb(Number(archive.json.archiveSizeBytes)),
      'server RSS before / peak MB': `${archive.rssBefore} / ${archive.peak}`,
    });
  } finally {
    await server.stop();
  }
}
