import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { agentsByRole, type Agents } from './helpers/inventory-factories';

const SECRET = 'webhook-secret-0123456789abcdef';
let t: TestApp;
let as: Agents;
beforeAll(async () => {
  t = await testApp({ WEBHOOK_SECRET: SECRET });
  as = await agentsByRole(t);
});
afterAll(() => t.close());

const fromWatchtower = async (message: string): Promise<number> =>
  (
    await t.request
      .post('/api/webhook/watchtower')
      .set('Authorization', `Bearer ${SECRET}`)
      .set('Content-Type', 'text/plain')
      .send(message)
      .expect(201)
  ).body.id;

const fromGitHub = async (delivery: string): Promise<number> => {
  const body = JSON.stringify({
    action: 'published',
    release: { tag_name: 'v2.0.0', target_commitish: 'main', name: 'Stores 2.0' },
    repository: { full_name: 'acme/stores' },
    sender: { login: 'alice' },
  });
  const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
  const res = await t.request
    .post('/api/webhook/github')
    .set('Content-Type', 'application/json')
    .set('X-GitHub-Event', 'release')
    .set('X-GitHub-Delivery', delivery)
    .set('X-Hub-Signature-256', signature)
    .send(body)
    .expect(201);
  return res.body.id;
};

describe('GET /api/notifications/deployments', () => {
  it('200 lists newest first with every field, limited by limit; total counts all', async () => {
    await t.db('deployment_notifications').delete();
    const delivery = randomUUID();
    const ids = [
      await fromWatchtower('Found new nginx:1.27 image (0123456789ab)\nCreating /proxy'),
      await fromGitHub(delivery),
      await fromWatchtower('Watchtower 1.7.1'),
    ];

    const all = await as.manager.get('/api/notifications/deployments').expect(200);
    expect(all.body.total).toBe(3);
    expect(all.body.notifications.map((n: { id: number }) => n.id)).toEqual([...ids].reverse());
    expect(all.body.notifications[1]).toEqual({
      id: ids[1],
      source: 'github',
      event: 'release',
      service: null,
      image: null,
      tag: null,
      status: 'published',
      host: null,
      message: 'Stores 2.0',
      repository: 'acme/stores',
      ref: 'v2.0.0',
      commit: null,
      actor: 'alice',
      summary: 'release v2.0.0 published',
      deliveryId: delivery,
      receivedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/),
    });
    expect(all.body.notifications[2]).toMatchObject({
      source: 'watchtower',
      service: 'proxy',
      image: 'nginx',
      tag: '1.27',
      status: 'updated',
    });

    const limited = await as.admin.get('/api/notifications/deployments?limit=2').expect(200);
    expect(limited.body.notifications.map((n: { id: number }) => n.id)).toEqual([ids[2], ids[1]]);
    expect(limited.body.total).toBe(3);
  });

  it('200 orders by the time received, not by id', async () => {
    const older = await fromWatchtower('later id, earlier time');
    await t
      .db('deployment_notifications')
      .where({ id: older })
      .update({ received_at: new Date('2020-01-01T00:00:00Z') });
    const res = await as.manager.get('/api/notifications/deployments?limit=100').expect(200);
    expect(res.body.notifications.at(-1)).toMatchObject({ id: older, receivedAt: '2020-01-01T00:00:00.000Z' });
  });

  it('400 on a bad limit', async () => {
    for (const limit of ['0', '101', 'abc', '1.5', '-1']) {
      const res = await as.manager.get(`/api/notifications/deployments?limit=${limit}`).expect(400);
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field: 'limit' }));
    }
  });

  it('401 without a session; 403 for a user', async () => {
    await t.request.get('/api/notifications/deployments').expect(401);
    await as.user.get('/api/notifications/deployments').expect(403);
  });
});

describe('DELETE /api/notifications/deployments/:id', () => {
  it('204 removes one; 404 once gone', async () => {
    const keep = await fromWatchtower('keep me');
    const id = await fromWatchtower('delete me');
    await as.admin.delete(`/api/notifications/deployments/${id}`).expect(204);
    expect(await t.db('deployment_notifications').where({ id }).first()).toBeUndefined();
    expect(await t.db('deployment_notifications').where({ id: keep }).first()).toBeDefined();
    const again = await as.admin.delete(`/api/notifications/deployments/${id}`).expect(404);
    expect(again.body).toEqual({ message: 'Deployment notification not found' });
  });

  it('400 on an id that is not a positive integer; 404 unknown', async () => {
    await as.admin.delete('/api/notifications/deployments/abc').expect(400);
    await as.admin.delete('/api/notifications/deployments/999999').expect(404);
  });

  it('403 for a manager; 401 without a session; the row stays', async () => {
    const id = await fromWatchtower('stays');
    await as.manager.delete(`/api/notifications/deployments/${id}`).expect(403);
    await t.request.delete(`/api/notifications/deployments/${id}`).expect(401);
    expect(await t.db('deployment_notifications').where({ id }).first()).toBeDefined();
  });

  it('201 again for a GitHub delivery redelivered after its notification was deleted', async () => {
    const delivery = randomUUID();
    const first = await fromGitHub(delivery);
    await as.admin.delete(`/api/notifications/deployments/${first}`).expect(204);
    const second = await fromGitHub(delivery);
    expect(second).not.toBe(first);
    expect(await t.db('deployment_notifications').where({ delivery_id: delivery }).count({ n: '*' })).toEqual([
      { n: 1 },
    ]);
  });
});
