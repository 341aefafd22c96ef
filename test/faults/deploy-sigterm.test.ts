import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCategory, buildUser } from '../helpers/factories';
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster';
import { invoicePdf } from '../helpers/purchasing-factories';
import {
  Client,
  connectionRefused,
  pause,
  startServer,
  type Answer,
  type ServerProcess,
} from '../helpers/server-process';
import { seedStore, type Store } from './fixtures';
import { ledgerProblems, NO_PROBLEMS } from './ledger';

/** src/server.ts's SHUTDOWN_GRACE_MS */
const GRACE_MS = 15_000;
const EXPORTED_ITEMS = 3_000;
const SALES = 6;
const UPLOADS = 20;

let cluster: PgCluster;
let server: ServerProcess;
let store: Store;
/** the uploads' people: one person's invoices are read one after another (at most three waiting), so each upload is another manager's */
let uploaders: { email: string }[];

beforeAll(async () => {
  cluster = await startPgCluster();
  store = await seedStore(cluster.db, 10);
  uploaders = await Promise.all(Array.from({ length: UPLOADS }, () => buildUser(cluster.db, { role: 'manager' })));
  // enough items that an export takes a while
  const category = await buildCategory(cluster.db);
  await cluster.db.raw(
    `INSERT INTO items (name, sku, category_id, price, current_stock, minimum_stock, is_active)
     SELECT 'Export item ' || n, 'EXP-' || n, ?, 1.50, 0, 0, true FROM generate_series(1, ?) AS n`,
    [category.id, EXPORTED_ITEMS],
  );
  server = await startServer(cluster.url);
});

afterAll(async () => {
  await server?.kill();
  await cluster?.destroy();
});

/** The client connections the server process has accepted (a connection still in the listen queue has no process). */
function acceptedConnections(server: ServerProcess): number {
  const out = execFileSync('ss', ['-Htnp', 'state', 'established', `( sport = :${server.port} )`]).toString();
  return out.split('\n').filter((line) => line.includes(`pid=${server.pid},`)).length;
}

/** A multipart upload of the PDF whose body is sent in two halves; the second half once `rest` resolves. */
function slowUpload(server: ServerProcess, cookie: string, pdf: Buffer, rest: Promise<unknown>): Promise<Answer> {
  const boundary = `faults${Date.now()}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="invoice"; filename="invoice.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
    ),
    pdf,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request(
      `${server.baseUrl}/api/upload/invoice`,
      {
        method: 'POST',
        agent: false,
        headers: { cookie, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body.length },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: JSON.parse(text || 'null'), ms: performance.now() - started }),
        );
        res.on('error', (err) =>
          resolve({ status: 0, body: undefined, ms: performance.now() - started, error: String(err) }),
        );
      },
    );
    req.on('error', (err) =>
      resolve({ status: 0, body: undefined, ms: performance.now() - started, error: String(err) }),
    );
    const half = Math.floor(body.length / 2);
    req.write(body.subarray(0, half));
    void rest.then(() => req.end(body.subarray(half)));
  });
}

describe('SIGTERM (a deploy) while 50 requests are in flight', () => {
  it('each in-flight request completes or fails whole, new connections are refused, the process exits 0 within the grace period', async () => {
    const manager = await new Client(server.baseUrl, 60_000).signIn(store.manager.email);
    const pdf = await invoicePdf();
    const uploading = await Promise.all(
      uploaders.map((uploader) => new Client(server.baseUrl, 60_000).signIn(uploader.email)),
    );
    // the sales wait inside their transactions on the items' rows, which the test holds until after the signal
    const holder = await cluster.db.transaction();
    await holder('items').whereIn('id', store.itemIds).forUpdate().select('id');
    let signal!: () => void;
    const signalled = new Promise<void>((resolve) => (signal = resolve));
    const afterSignal = signalled.then(() => pause(1_000));

    const requests: Promise<{ kind: 'export' | 'sale' | 'upload'; answer: Answer }>[] = [];
    // 6 of the pool's 10 connections wait in the sales; the exports share the other 4
    for (let i = 0; i < SALES; i += 1) {
      const items = [
        { itemId: store.itemIds[i], quantity: 1 },
        { itemId: store.itemIds[(i + 1) % 10], quantity: 2 },
      ];
      requests.push(
        manager
          .post('/api/sales', { chargeCode: store.chargeCode, items })
          .then((answer) => ({ kind: 'sale', answer })),
      );
    }
    for (let i = 0; i < UPLOADS; i += 1) {
      requests.push(
        slowUpload(server, uploading[i].cookie, pdf, afterSignal).then((answer) => ({ kind: 'upload', answer })),
      );
    }
    for (let i = 0; i < 50 - SALES - UPLOADS; i += 1) {
      const format = i % 2 ? 'csv' : 'xlsx';
      requests.push(
        manager.post('/api/items/bulk/export', { all: true, format }).then((answer) => ({ kind: 'export', answer })),
      );
    }
    // all 50 accepted by the process (not waiting in the kernel's listen queue)
    const deadline = Date.now() + 20_000;
    while (acceptedConnections(server) < 50 && Date.now() < deadline) await pause(20);
    const inFlight = acceptedConnections(server);

    const sent = performance.now();
    server.child.kill('SIGTERM');
    signal();
    let refusedAfter = Infinity;
    while (performance.now() - sent < 5_000) {
      if (await connectionRefused(server.port)) {
        refusedAfter = performance.now() - sent;
        break;
      }
      await pause(20);
    }
    await afterSignal;
    await holder.rollback();
    const [[code], results] = await Promise.all([server.exited, Promise.all(requests)]);
    const exitedAfter = performance.now() - sent;

    const outcome = results.reduce<Record<string, number>>((acc, { kind, answer }) => {
      acc[`${kind} ${answer.status}`] = (acc[`${kind} ${answer.status}`] ?? 0) + 1;
      return acc;
    }, {});
    for (const kind of ['export', 'sale', 'upload']) {
      const failed = results.find((r) => r.kind === kind && (r.answer.status >= 500 || r.answer.status === 0));
      if (failed)
        console.log(kind, failed.answer.status, failed.answer.error, JSON.stringify(failed.answer.body)?.slice(0, 300));
    }
    // what the server said about any that failed
    for (const line of server
      .log()
      .split('\n')
      .filter((l) => /"level":(40|50)/.test(l)))
      console.log(line.slice(0, 400));
    console.log(
      `[faults] SIGTERM with ${inFlight} connections in flight: new connections refused after ${Math.round(refusedAfter)} ms, ` +
        `exited ${code} after ${Math.round(exitedAfter)} ms; answers ${JSON.stringify(outcome)}`,
    );

    expect(inFlight).toBeGreaterThanOrEqual(50);
    expect(refusedAfter).toBeLessThan(2_000);
    expect(code).toBe(0);
    expect(exitedAfter).toBeLessThan(GRACE_MS);
    // each completed whole (every export has every item, every sale its lines, every upload what it read) or failed
    // whole: a 503 before anything was written (a request that waited longer than the pool's acquire timeout), or,
    // for an export whose next page found no connection after its first bytes, a response cut off that the client
    // sees fail (no complete-looking file)
    for (const { kind, answer } of results) {
      if (kind === 'export' && answer.status === 0) continue;
      expect([kind, answer.error]).toEqual([kind, undefined]);
      expect([kind === 'sale' ? 201 : 200, 503]).toContain(answer.status);
      if (kind === 'export' && typeof answer.body === 'string' && answer.body.startsWith('ID,')) {
        expect(answer.body.trim().split('\n').length).toBe(EXPORTED_ITEMS + 10 + 1);
      }
    }
    // most complete
    expect(
      results.filter(({ answer }) => answer.status === 200 || answer.status === 201).length,
    ).toBeGreaterThanOrEqual(40);
    expect(await ledgerProblems(cluster.db)).toEqual(NO_PROBLEMS);
    const sold = results.filter(({ kind, answer }) => kind === 'sale' && answer.status === 201).length;
    expect(Number((await cluster.db('sales').count<{ count: number }[]>('* as count'))[0].count)).toBe(sold);
    expect(server.log()).not.toContain('did not finish in time');
  });
});
