import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTopology, topologyMissing, type Topology } from '../helpers/topology';

/**
 * Issue 44's reference deployment, for real (test/helpers/topology.ts): HAProxy in front of two
 * instances, PgBouncer (transaction and session pools) in front of a primary with a synchronous
 * streaming replica. Everything goes through HAProxy's URL unless an instance is named.
 */
if (topologyMissing) console.warn(`[faults] topology skipped: ${topologyMissing}`);

let topology: Topology;

beforeAll(async () => {
  if (topologyMissing) return;
  topology = await startTopology({ synchronousReplica: true });
}, 300_000);

afterAll(async () => {
  await topology?.close();
});

describe.skipIf(topologyMissing)('the reference topology', () => {
  it('serves through HAProxy, both instances on PgBouncer in transaction mode, the replica synchronous and healthy', async () => {
    const res = await fetch(`${topology.url}/api/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ database: 'connected', poolMode: 'transaction' });
    const replication = await topology.primary.db.raw<{ rows: { application_name: string; sync_state: string }[] }>(
      'SELECT application_name, sync_state FROM pg_stat_replication',
    );
    expect(replication.rows).toEqual([{ application_name: 'replica1', sync_state: 'sync' }]);
    const pools = await topology.pgbouncer.admin('SHOW DATABASES');
    expect(pools.filter((p) => p.name === 'stores' || p.name === 'stores_direct')).toHaveLength(2);
  });
});
