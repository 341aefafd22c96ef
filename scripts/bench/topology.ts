// Issue 44's topology benchmark, in one sitting on one PostgreSQL build (Debian's 15, from
// test/helpers/topology.ts): sales/s (quote save + process) and the sales report's page 1 req/s,
// first on one instance straight on the primary (no pooler, no replica), then on two instances
// behind HAProxy and PgBouncer (transaction) with the report on the replica; the PostgreSQL
// connections each holds; and a failover under sale load (synchronous replica): the time from the
// primary's stop to the first 201.
//
// The single instance runs against the topology's own primary, so both phases share the server,
// its settings, the data and the machine's moment; only the path to it differs. For that phase
// the primary's synchronous_standby_names is emptied (a department's lone database waits for no
// replica); the two-instance phase sells both ways, asynchronous (the same commit as the single
// instance, so what differs is HAProxy and PgBouncer) and synchronous (deploy/'s setting).
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { Knex } from 'knex';
import { Client, pause, startServer, type ServerProcess } from '../../test/helpers/server-process';
import { startTopology, topologyMissing, type PgNode, type Topology } from '../../test/helpers/topology';
import {
  BENCH_ADMIN,
  checkTarget,
  percentile,
  report,
  round,
  runLoad,
  sellThroughQuotes,
  serverNodeOptions,
  signIn,
} from './lib';
import { CHARGE_CODE, seedCatalogue, seedSales } from './sales';

const SESSIONS = 20;
const SALE_SECONDS = 12;
const REPORT_CONNECTIONS = 10;
const REPORT_SECONDS = 8;
const FAILOVER_COUNTERS = 10;
/** how long the failover's sale load runs before the primary is stopped, and after the first 201 */
const FAILOVER_MARGIN_MS = 3000;
/** the longest the failover's load waits for a 201 after the re-point before giving up */
const FAILOVER_GIVE_UP_MS = 30_000;
const REPORT_PATH = '/api/sales/reports?page=1&limit=50';

/** What every instance runs with: as `npm start` would, with the bench's admin and no login limits in the way. */
const serviceEnv = {
  NODE_ENV: 'production',
  NODE_OPTIONS: process.env.NODE_OPTIONS ?? serverNodeOptions,
  ADMIN_EMAIL: BENCH_ADMIN.email,
  ADMIN_PASSWORD: BENCH_ADMIN.password,
  LOGIN_MAX_FAILURES: '1000',
  LOGIN_MAX_FAILURES_PER_ADDRESS: '100000',
  LOGIN_MAX_FAILURES_PER_DAY: '100000',
  // nothing to drain at the end of a bench
  SHUTDOWN_DRAIN_SECONDS: '0',
};

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** The pid owning each local TCP port that has a connection to `port` (from /proc/net/tcp and every process's fds). */
function clientPidsByPort(port: number): Map<number, number> {
  const inodeOfPort = new Map<string, number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines: string[];
    try {
      lines = readFileSync(table, 'utf8').split('\n').slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const [localPort, remotePort] = [f[1], f[2]].map((a) => parseInt(a.split(':')[1], 16));
      if (remotePort === port) inodeOfPort.set(f[9], localPort);
    }
  }
  const owners = new Map<number, number>();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        const local = inode === undefined ? undefined : inodeOfPort.get(inode);
        if (local !== undefined) owners.set(local, Number(pid));
      } catch {
        // closed meanwhile
      }
    }
  }
  return owners;
}

/**
 * The client connections a PostgreSQL server holds, by the process holding them (named from
 * `names`, else its command: pgbouncer), leaving out this bench's own (seeding, these queries).
 */
async function connectionsOn(node: PgNode, names: Map<number, string>): Promise<Record<string, number>> {
  const rows: { client_port: number; state: string | null }[] = (
    await node.db.raw(
      `SELECT client_port, state FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND client_port IS NOT NULL AND pid <> pg_backend_pid()`,
    )
  ).rows;
  const owners = clientPidsByPort(node.port);
  const counts: Record<string, number> = {};
  for (const row of rows) {
    const pid = owners.get(row.client_port);
    if (pid === process.pid) continue;
    let name = pid === undefined ? 'unknown' : names.get(pid);
    if (name === undefined) {
      try {
        name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      } catch {
        name = 'gone';
      }
    }
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

const describeCounts = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, n]) => `${name} ${n}`)
    .join(', ') || 'none';

/** The replica's committed transactions in the service's database: rising while the report runs shows it serves it. */
const replicaCommits = async (db: Knex) =>
  Number(
    (await db.raw(`SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`)).rows[0].xact_commit,
  );

/** Waits until the replica has replayed everything the primary has written so far (the seeding). */
async function replicaCaughtUp(topology: Topology) {
  const { rows } = await topology.primary.db.raw(`SELECT pg_current_wal_lsn()::text AS lsn`);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const replayed = await topology.replica.db.raw(`SELECT pg_last_wal_replay_lsn() >= ?::pg_lsn AS done`, [
      rows[0].lsn,
    ]);
    if (replayed.rows[0].done) return;
    if (Date.now() > deadline) throw new Error('the replica did not replay the seeding within 120 s');
    await pause(250);
  }
}

/** The primary waits for the replica on each commit (deploy/'s setting) or not (a lone database). */
async function synchronous(topology: Topology, on: boolean) {
  const { db } = topology.primary;
  // RESET goes back to postgresql.conf, where the topology wrote deploy/'s replica1
  await db.raw(on ? `ALTER SYSTEM RESET synchronous_standby_names` : `ALTER SYSTEM SET synchronous_standby_names = ''`);
  await db.raw(`SELECT pg_reload_conf()`);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { rows } = await db.raw(`SELECT current_setting('synchronous_standby_names') AS names`);
    if ((rows[0].names !== '') === on) return;
    await pause(100);
  }
  throw new Error('synchronous_standby_names did not change');
}

async function reportLoad(baseUrl: string, cookie: string, replica: Knex) {
  const before = await replicaCommits(replica);
  const load = await runLoad({
    url: `${baseUrl}${REPORT_PATH}`,
    headers: { cookie },
    connections: REPORT_CONNECTIONS,
    duration: REPORT_SECONDS,
  });
  return { ...load, replicaCommits: (await replicaCommits(replica)) - before };
}

async function saleLoad(baseUrl: string, cookies: string[], itemIds: number[], tag: string) {
  const sold = await sellThroughQuotes({
    baseUrl,
    cookies,
    itemIds,
    chargeCode: CHARGE_CODE,
    seconds: SALE_SECONDS,
    tag,
  });
  const processMs = [...sold.process].sort((a, b) => a - b);
  return {
    perSecond: round(sold.processed / sold.elapsed),
    summary: `${round(sold.processed / sold.elapsed)} sales/s (${sold.processed} in ${round(sold.elapsed)} s), process p50 / p99 ${round(percentile(processMs, 50))} / ${round(percentile(processMs, 99))} ms, ${sold.failures} failed${sold.failures ? ` (${[...sold.failureSamples].slice(0, 2).join(' | ')})` : ''}`,
  };
}

/**
 * One sign-in after another, as counters open in the morning: 21 at once through PgBouncer on a
 * loaded machine had one wait past the 3 s connect timeout for a new pool connection (a 503).
 */
async function signInMany(baseUrl: string, n: number) {
  const cookies: string[] = [];
  while (cookies.length < n) cookies.push(await signIn(baseUrl, BENCH_ADMIN.email, BENCH_ADMIN.password));
  return cookies;
}

async function singleInstance(topology: Topology, itemIds: number[]) {
  await synchronous(topology, false);
  // straight on the primary: session mode, no DATABASE_DIRECT_URL, no replica
  const instance: ServerProcess = await startServer(topology.primary.url, serviceEnv);
  try {
    const names = new Map([[instance.pid, 'the instance']]);
    const [reportCookie, ...cookies] = await signInMany(instance.baseUrl, SESSIONS + 1);
    const reports = await reportLoad(instance.baseUrl, reportCookie, topology.replica.db);
    const reportLoadAverage = loadAverage();
    const sales = await saleLoad(instance.baseUrl, cookies, itemIds, 'single');
    const salesLoadAverage = loadAverage();
    const onPrimary = await connectionsOn(topology.primary, names);
    report(`One instance straight on the primary (no pooler, no replica, asynchronous), ${SESSIONS} sessions`, {
      'sales (quote save + process)': sales.summary,
      'sales/s': sales.perSecond,
      [`report page 1 req/s (${REPORT_CONNECTIONS} conn)`]: reports.requestsPerSecond,
      'report p50 / p99 ms': `${reports.p50} / ${reports.p99}`,
      'report errors / non-2xx': `${reports.errors} / ${reports.non2xx}`,
      'primary connections, the instance': onPrimary['the instance'] ?? 0,
      'load average (report / sales)': `${reportLoadAverage} / ${salesLoadAverage}`,
    });
    return { sales: sales.perSecond, reports: reports.requestsPerSecond };
  } finally {
    await instance.kill();
  }
}

async function twoInstances(topology: Topology, itemIds: number[]) {
  const names = new Map(topology.instances.map((s, i) => [s.pid, `instance ${i + 1}`]));
  const [reportCookie, ...cookies] = await signInMany(topology.url, SESSIONS + 1);
  const reports = await reportLoad(topology.url, reportCookie, topology.replica.db);
  const reportLoadAverage = loadAverage();
  const asyncSales = await saleLoad(topology.url, cookies, itemIds, 'pooled-async');
  const asyncLoadAverage = loadAverage();
  await synchronous(topology, true);
  const syncSales = await saleLoad(topology.url, cookies, itemIds, 'pooled-sync');
  const syncLoadAverage = loadAverage();
  const [onPrimary, onReplica, pools] = await Promise.all([
    connectionsOn(topology.primary, names),
    connectionsOn(topology.replica, names),
    topology.pgbouncer.admin('SHOW POOLS'),
  ]);
  const pool = (database: string) => {
    const row = pools.find((p) => p.database === database);
    if (!row) return 'none';
    const n = (key: string) => Number(row[key] ?? 0);
    return `clients ${n('cl_active') + n('cl_waiting')}, servers ${n('sv_active') + n('sv_idle') + n('sv_used') + n('sv_tested') + n('sv_login')} (active ${n('sv_active')}, idle ${n('sv_idle') + n('sv_used')})`;
  };
  report(
    `Two instances behind HAProxy, PgBouncer (transaction) on the primary, report on the replica, ${SESSIONS} sessions`,
    {
      'sales, asynchronous replica': asyncSales.summary,
      'sales, synchronous replica': syncSales.summary,
      'sales/s async / sync': `${asyncSales.perSecond} / ${syncSales.perSecond}`,
      [`report page 1 req/s (${REPORT_CONNECTIONS} conn)`]: reports.requestsPerSecond,
      'report p50 / p99 ms': `${reports.p50} / ${reports.p99}`,
      'report errors / non-2xx': `${reports.errors} / ${reports.non2xx}`,
      'replica commits during the report': reports.replicaCommits,
      'primary connections': describeCounts(onPrimary),
      'replica connections': describeCounts(onReplica),
      'PgBouncer stores (transaction)': pool('stores'),
      'PgBouncer stores_direct (session)': pool('stores_direct'),
      'load average (report / async / sync)': `${reportLoadAverage} / ${asyncLoadAverage} / ${syncLoadAverage}`,
    },
  );
  return { sales: asyncSales.perSecond, syncSales: syncSales.perSecond, reports: reports.requestsPerSecond };
}

/**
 * Direct sales (POST /api/sales, one unit, an Idempotency-Key each) from FAILOVER_COUNTERS counters
 * through HAProxy while the primary is stopped, the replica promoted and PgBouncer re-pointed, as
 * docs/operations.md's failover does.
 */
async function failover(topology: Topology, itemIds: number[]) {
  const counters = await Promise.all(
    Array.from({ length: FAILOVER_COUNTERS }, () =>
      new Client(topology.url, 20_000).signIn(BENCH_ADMIN.email, BENCH_ADMIN.password),
    ),
  );
  const answers: { status: number; at: number }[] = [];
  const marks = { stopping: 0, stopped: 0, promoted: 0, repointed: 0 };
  // a request that got no HTTP answer at all (status 0): what fetch said
  const noAnswer = new Set<string>();
  let stopAt = Infinity;
  let n = 0;
  const firstCreatedAfter = (t: number) => answers.find((a) => a.status === 201 && a.at > t)?.at;
  const load = Promise.all(
    counters.map(async (counter) => {
      while (Date.now() < stopAt) {
        n += 1;
        const answer = await counter.post(
          '/api/sales',
          { chargeCode: CHARGE_CODE, items: [{ itemId: itemIds[n % itemIds.length], quantity: 1 }] },
          { 'idempotency-key': `bench-failover-${n}` },
        );
        answers.push({ status: answer.status, at: Date.now() });
        if (answer.status === 0) noAnswer.add(answer.error ?? 'no answer');
      }
    }),
  );
  await pause(FAILOVER_MARGIN_MS);
  const loadAverageBefore = loadAverage();
  marks.stopping = Date.now();
  await topology.stopPrimary();
  marks.stopped = Date.now();
  await topology.promoteReplica();
  marks.promoted = Date.now();
  await topology.repointPgBouncer(true);
  marks.repointed = Date.now();
  const deadline = Date.now() + FAILOVER_GIVE_UP_MS;
  while (firstCreatedAfter(marks.stopped) === undefined && Date.now() < deadline) await pause(50);
  stopAt = Date.now() + FAILOVER_MARGIN_MS;
  await load;

  const first = firstCreatedAfter(marks.stopped);
  const during = answers.filter((a) => a.at > marks.stopping && (first === undefined || a.at <= first));
  const tally = (xs: typeof answers) =>
    Object.entries(
      xs.reduce<Record<number, number>>((acc, a) => ({ ...acc, [a.status]: (acc[a.status] ?? 0) + 1 }), {}),
    )
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ');
  const since = (t: number) => (first === undefined ? 'no 201' : `${first - t}`);
  report(`Failover under sale load (${FAILOVER_COUNTERS} counters, synchronous replica, through HAProxy)`, {
    'primary stop (pg_ctl -m fast) ms': marks.stopped - marks.stopping,
    'promotion (pg_ctl promote) ms': marks.promoted - marks.stopped,
    'PgBouncer re-point + RELOAD ms': marks.repointed - marks.promoted,
    'primary stopped -> first 201 ms': since(marks.stopped),
    'promoted (accepts writes) -> first 201 ms': since(marks.promoted),
    're-pointed -> first 201 ms': since(marks.repointed),
    'answers from pg_ctl stop to that 201': tally(during) || 'none',
    'all answers': tally(answers),
    'no answer (status 0)': [...noAnswer].join(' | ') || 'none',
    'load average before the stop': loadAverageBefore,
  });
  if (first !== undefined)
    checkTarget('failover: new primary accepting writes -> first 201', first - marks.promoted, 'ms', { atMost: 5000 });
  else checkTarget('failover: new primary accepting writes -> first 201', FAILOVER_GIVE_UP_MS, 'ms', { atMost: 5000 });
}

export async function run(): Promise<void> {
  if (topologyMissing) {
    console.log(`  skipped: ${topologyMissing}`);
    return;
  }
  const started = Date.now();
  const topology = await startTopology({ synchronousReplica: true, instances: 2, env: serviceEnv });
  try {
    console.log(`  topology up in ${round((Date.now() - started) / 1000)} s (load average ${loadAverage()})`);
    const { ids, adminId } = await seedCatalogue(topology.primary);
    const seeding = Date.now();
    await seedSales(topology.primary, adminId);
    await replicaCaughtUp(topology);
    console.log(`  seeded and replicated in ${round((Date.now() - seeding) / 1000)} s`);
    const single = await singleInstance(topology, ids);
    const pooled = await twoInstances(topology, ids);
    await failover(topology, ids);
    report('Two instances against one (same PostgreSQL, same sitting)', {
      'sales/s (asynchronous)': `${single.sales} -> ${pooled.sales} (x${round(pooled.sales / Math.max(single.sales, 0.1))})`,
      'report page 1 req/s': `${single.reports} -> ${pooled.reports} (x${round(pooled.reports / Math.max(single.reports, 1))})`,
      'bench seconds': round((Date.now() - started) / 1000),
    });
  } finally {
    await topology.close();
  }
}
