import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster';
import { Client, pause, startServer, type ServerProcess } from '../helpers/server-process';
import { seedStore, sessionId, type Store } from './fixtures';
import { ledgerProblems, NO_PROBLEMS } from './ledger';

let cluster: PgCluster;
let server: ServerProcess;
let store: Store;

beforeAll(async () => {
  cluster = await startPgCluster();
  store = await seedStore(cluster.db, 2);
  server = await startServer(cluster.url);
});

afterAll(async () => {
  await server?.kill();
  await cluster?.destroy();
});

/** The server's connection that waits for a row lock, once one does. */
async function waitingBackend(): Promise<number> {
  for (let i = 0; i < 100; i += 1) {
    const { rows } = await cluster.db.raw<{ rows: { pid: number }[] }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
    );
    if (rows[0]) return rows[0].pid;
    await pause(50);
  }
  throw new Error('no request waited for the lock');
}

describe('a connection lost in the middle of a transaction', () => {
  it('503 with a message (not 500) when the database ends the connection of a request inside its transaction; nothing of it is written, and the next request succeeds', async () => {
    const client = await new Client(server.baseUrl).signIn(store.manager.email);
    const [itemId] = store.itemIds;
    const movementsBefore = await cluster
      .db('stock_movements')
      .where({ item_id: itemId })
      .count<{ count: number }[]>('* as count');
    // the test holds the item's row, so the request's transaction waits on it
    const holder = await cluster.db.transaction();
    await holder('items').where({ id: itemId }).forUpdate().first('id');
    const pending = client.post(`/api/items/${itemId}/stock`, { type: 'in', quantity: 5 });
    const pid = await waitingBackend();
    await cluster.db.raw('SELECT pg_terminate_backend(?)', [pid]);
    const answer = await pending;
    await holder.rollback();

    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 503,
      body: { message: 'Service temporarily unavailable' },
    });
    expect(
      await cluster.db('stock_movements').where({ item_id: itemId }).count<{ count: number }[]>('* as count'),
    ).toEqual(movementsBefore);
    expect((await client.post(`/api/items/${itemId}/stock`, { type: 'in', quantity: 5 })).status).toBe(200);
    expect(await ledgerProblems(cluster.db)).toEqual(NO_PROBLEMS);
  });

  it('503, not "500 Failed to create draft quote", when the connection of a draft quote being saved is ended', async () => {
    const client = await new Client(server.baseUrl).signIn(store.manager.email);
    const holder = await cluster.db.transaction();
    await holder.raw('LOCK TABLE quotes IN ACCESS EXCLUSIVE MODE');
    const pending = client.post('/api/sales/quotes', {
      chargeCode: store.chargeCode,
      sessionId: sessionId(),
      items: [{ itemId: store.itemIds[0], quantity: 1 }],
    });
    const pid = await waitingBackend();
    await cluster.db.raw('SELECT pg_terminate_backend(?)', [pid]);
    const answer = await pending;
    await holder.rollback();
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 503,
      body: { message: 'Service temporarily unavailable' },
    });
    expect(await cluster.db('quotes').count<{ count: number }[]>('* as count')).toEqual([{ count: 0 }]);
  });
});
