import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';

const SECRET = 'webhook-secret-0123456789abcdef';
let t: TestApp;
let unconfigured: TestApp;
beforeAll(async () => {
  [t, unconfigured] = await Promise.all([testApp({ WEBHOOK_SECRET: SECRET }), testApp()]);
});
afterAll(() => Promise.all([t.close(), unconfigured.close()]));

const stored = (id: number) => t.db('deployment_notifications').where({ id }).first();
const count = async () => Number((await t.db('deployment_notifications').count({ n: '*' }))[0].n);

describe('POST /api/webhook/watchtower', () => {
  const post = (app = t) => app.request.post('/api/webhook/watchtower');
  const withSecret = () => post().set('Authorization', `Bearer ${SECRET}`);

  it("201 stores shoutrrr's JSON template and extracts the container from Watchtower's log lines", async () => {
    const payload = {
      title: 'Watchtower updates on prod-1',
      message:
        'Found new ghcr.io/acme/stores:1.4.0 image (0123456789ab)\nStopping /stores (fedcba987654) with SIGTERM\nCreating /stores\nRemoving image 0123456789ab',
    };
    const res = await withSecret().send(payload).expect(201);
    expect(res.body).toMatchObject({
      source: 'watchtower',
      event: 'notification',
      service: 'stores',
      image: 'ghcr.io/acme/stores',
      tag: '1.4.0',
      status: 'updated',
      host: 'prod-1',
      message: payload.message,
      summary: 'stores updated on prod-1',
      repository: null,
      deliveryId: null,
    });
    expect(res.body).not.toHaveProperty('payload');
    const row = await stored(res.body.id);
    expect(row).toMatchObject({
      source: 'watchtower',
      service: 'stores',
      image: 'ghcr.io/acme/stores',
      tag: '1.4.0',
      status: 'updated',
      host: 'prod-1',
    });
    expect(row.payload).toEqual(payload);
    expect(new Date(res.body.receivedAt).getTime()).toBe(row.received_at.getTime());
  });

  it('201 keeps a text/plain body as the message and reads a report line from it', async () => {
    const text =
      '2 Scanned, 1 Updated, 0 Failed\n- proxy (nginx:1.27.3): 0123456789ab updated to fedcba987654\n- stores (ghcr.io/acme/stores:1.4.0): Fresh';
    const res = await withSecret().set('Content-Type', 'text/plain; charset=utf-8').send(text).expect(201);
    expect(res.body).toMatchObject({
      service: 'proxy',
      image: 'nginx',
      tag: '1.27.3',
      status: 'updated',
      host: null,
      message: text,
    });
    expect((await stored(res.body.id)).payload).toBe(text);
  });

  it('201 prefers a failed container and explicit fields; a registry port is not a tag', async () => {
    const failed = await withSecret()
      .set('Content-Type', 'text/plain')
      .send(
        '1 Scanned, 1 Updated, 1 Failed\n- web (nginx:1.27): 0123 updated to 4567\n- stores (registry.local:5000/stores): Failed: pull access denied',
      )
      .expect(201);
    expect(failed.body).toMatchObject({
      service: 'stores',
      image: 'registry.local:5000/stores',
      tag: null,
      status: 'failed',
    });

    const unable = await withSecret()
      .send({
        message:
          'Found new acme/web:3 image (0123456789ab)\nUnable to update container "/stores": no such image. Proceeding to next.',
      })
      .expect(201);
    expect(unable.body).toMatchObject({ service: 'stores', image: null, status: 'failed' });

    const two = await withSecret()
      .send({
        message:
          'Found new acme/web:3 image (0123456789ab)\nFound new acme/api:5 image (fedcba987654)\nCreating /api\nCreating /web',
      })
      .expect(201);
    expect(two.body).toMatchObject({
      service: null,
      image: 'acme/web',
      tag: '3',
      status: 'updated',
      summary: 'acme/web:3 updated',
    });

    const explicit = await withSecret()
      .send({ service: 'api', image: 'acme/api:2.0@sha256:abc', status: 'Updated', host: 'web-2' })
      .expect(201);
    expect(explicit.body).toMatchObject({
      service: 'api',
      image: 'acme/api',
      tag: '2.0',
      status: 'updated',
      host: 'web-2',
      summary: 'api updated on web-2',
    });
  });

  it("201 reads Watchtower's json.v1 template", async () => {
    const payload = {
      title: 'Watchtower updates on prod-2',
      host: 'prod-2',
      report: {
        scanned: [],
        updated: [
          {
            id: 'c0ffee123456',
            name: '/stores',
            currentImageId: '0123456789ab',
            latestImageId: 'fedcba987654',
            imageName: 'ghcr.io/acme/stores:1.5.0',
            state: 'Updated',
          },
        ],
        failed: [],
      },
      entries: [
        {
          level: 'info',
          message: 'Found new ghcr.io/acme/stores:1.5.0 image (fedcba987654)',
          data: {},
          time: '2026-11-23T10:00:00Z',
        },
        { level: 'info', message: 'Creating /stores', data: {}, time: '2026-11-23T10:00:01Z' },
      ],
    };
    const res = await withSecret().send(payload).expect(201);
    expect(res.body).toMatchObject({
      service: 'stores',
      image: 'ghcr.io/acme/stores',
      tag: '1.5.0',
      status: 'updated',
      host: 'prod-2',
      message: 'Found new ghcr.io/acme/stores:1.5.0 image (fedcba987654)\nCreating /stores',
    });
  });

  it('201 with the secret as a bearer token: the user-token middleware never sees it', async () => {
    const res = await withSecret().send({ message: 'Watchtower 1.7.1' }).expect(201);
    expect(res.body).toMatchObject({ message: 'Watchtower 1.7.1', summary: 'Watchtower 1.7.1', status: null });
  });

  it('401 without or with a wrong secret, and nothing is stored', async () => {
    const before = await count();
    const missing = await post().send({ message: 'x' }).expect(401);
    expect(missing.body).toEqual({ message: 'Authorization: Bearer <WEBHOOK_SECRET> required' });
    const wrong = await post().set('Authorization', `Bearer ${SECRET}x`).send({ message: 'x' }).expect(401);
    expect(wrong.body).toEqual({ message: 'Invalid webhook secret' });
    await post().set('Authorization', `Basic ${SECRET}`).send({ message: 'x' }).expect(401);
    expect(await count()).toBe(before);
  });

  it('503 when no WEBHOOK_SECRET is configured', async () => {
    const res = await post(unconfigured).set('Authorization', `Bearer ${SECRET}`).send({ message: 'x' }).expect(503);
    expect(res.body).toEqual({ message: 'Webhooks are disabled: WEBHOOK_SECRET is not configured' });
  });

  it('400 on a body labelled JSON that is not JSON, an empty body or a JSON array; 415 on another type', async () => {
    const before = await count();
    const malformed = await withSecret()
      .set('Content-Type', 'application/json')
      .send('Found new nginx image')
      .expect(400);
    expect(malformed.body).toEqual({ message: 'Malformed JSON in request body' });
    await withSecret().set('Content-Type', 'text/plain').send('').expect(400);
    await withSecret().send([1, 2]).expect(400);
    await withSecret().set('Content-Type', 'application/x-www-form-urlencoded').send('message=x').expect(415);
    expect(await count()).toBe(before);
  });

  it('413 on a body over 1 MB', async () => {
    await withSecret()
      .set('Content-Type', 'text/plain')
      .send('x'.repeat(1024 * 1024 + 1))
      .expect(413);
  });
});

describe('POST /api/webhook/github', () => {
  const sign = (body: string | Buffer, secret = SECRET) =>
    `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  const deliver = (
    event: string,
    body: string,
    opts: { signature?: string | null; delivery?: string; contentType?: string } = {},
  ) => {
    const req = t.request
      .post('/api/webhook/github')
      .set('Content-Type', opts.contentType ?? 'application/json')
      .set('X-GitHub-Event', event)
      .set('X-GitHub-Delivery', opts.delivery ?? randomUUID());
    const signature = opts.signature === undefined ? sign(body) : opts.signature;
    if (signature !== null) req.set('X-Hub-Signature-256', signature);
    return req.send(body);
  };

  const repository = {
    id: 1,
    name: 'stores',
    full_name: 'acme/stores',
    private: true,
    html_url: 'https://github.com/acme/stores',
  };
  const sender = { login: 'alice', id: 42, type: 'User' };
  const pushPayload = {
    ref: 'refs/heads/main',
    before: '1111111111111111111111111111111111111111',
    after: '9f3c2a1b9f3c2a1b9f3c2a1b9f3c2a1b9f3c2a1b',
    created: false,
    deleted: false,
    forced: false,
    commits: [
      {
        id: '8e2b1a0c8e2b1a0c8e2b1a0c8e2b1a0c8e2b1a0c',
        message: 'Fix VAT rounding',
        author: { name: 'Alice', username: 'alice' },
      },
      {
        id: '7d1a0b9c7d1a0b9c7d1a0b9c7d1a0b9c7d1a0b9c',
        message: 'Add tests',
        author: { name: 'Alice', username: 'alice' },
      },
      {
        id: '9f3c2a1b9f3c2a1b9f3c2a1b9f3c2a1b9f3c2a1b',
        message: 'Release notes',
        author: { name: 'Alice', username: 'alice' },
      },
    ],
    head_commit: {
      id: '9f3c2a1b9f3c2a1b9f3c2a1b9f3c2a1b9f3c2a1b',
      message: 'Release notes',
      timestamp: '2026-11-23T10:00:00Z',
    },
    pusher: { name: 'alice', email: 'alice@example.org' },
    repository,
    sender,
  };

  it('201 accepts a signature over the raw bytes that differ from re-serialised JSON', async () => {
    // whitespace, a key order of its own and unicode escapes: JSON.stringify(JSON.parse(body)) gives other bytes
    const body =
      '{\n  "sender": {"login": "b\\u00f6b", "id": 7},\n  "ref":   "refs/heads/feature/\\u00e9t\\u00e9",\n' +
      '  "after": "0123456789abcdef0123456789abcdef01234567",\n  "commits": [ {"id": "0123456789abcdef0123456789abcdef01234567"} ],\n' +
      '  "head_commit": {"message": "caf\\u00e9 \\ud83d\\ude00", "id": "0123456789abcdef0123456789abcdef01234567"},\n' +
      '  "repository": {"full_name": "acme\\/stores"}\n}\n';
    expect(JSON.stringify(JSON.parse(body))).not.toBe(body);
    const res = await deliver('push', body).expect(201);
    expect(res.body).toMatchObject({
      source: 'github',
      event: 'push',
      repository: 'acme/stores',
      ref: 'feature/été',
      commit: '0123456789abcdef0123456789abcdef01234567',
      actor: 'böb',
      message: 'café 😀',
      summary: 'böb pushed 1 commit to feature/été',
    });
    expect((await stored(res.body.id)).payload).toEqual(JSON.parse(body));
  });

  it('401 when the body was altered, the secret is wrong, or the header is missing or malformed; nothing is stored', async () => {
    const body = JSON.stringify(pushPayload);
    const before = await count();
    const altered = await deliver('push', body.replace('main', 'mainx'), { signature: sign(body) }).expect(401);
    expect(altered.body).toEqual({ message: 'Invalid signature' });
    await deliver('push', body, { signature: sign(body, `${SECRET}-other`) }).expect(401);
    const missing = await deliver('push', body, { signature: null }).expect(401);
    expect(missing.body).toEqual({ message: 'X-Hub-Signature-256 header required' });
    await deliver('push', body, { signature: sign(body).replace('sha256=', 'sha1=') }).expect(401);
    await deliver('push', body, { signature: 'sha256=zz' }).expect(401);
    await deliver('push', body, { signature: sign(body).slice(0, -2) }).expect(401);
    expect(await count()).toBe(before);
  });

  it('200 answers a ping and stores nothing', async () => {
    const before = await count();
    const body = JSON.stringify({
      zen: 'Keep it logically awesome.',
      hook_id: 123,
      hook: { type: 'Repository', events: ['push'] },
      repository,
      sender,
    });
    const res = await deliver('ping', body).expect(200);
    expect(res.body).toEqual({ message: 'Ping received; push, release, workflow_run events are stored' });
    expect(await count()).toBe(before);
  });

  it('201 stores a push: repository, branch, head commit, actor and summary', async () => {
    const delivery = randomUUID();
    const res = await deliver('push', JSON.stringify(pushPayload), { delivery }).expect(201);
    expect(res.body).toMatchObject({
      repository: 'acme/stores',
      ref: 'main',
      commit: '9f3c2a1b9f3c2a1b9f3c2a1b9f3c2a1b9f3c2a1b',
      actor: 'alice',
      status: null,
      summary: 'alice pushed 3 commits to main',
      message: 'Release notes',
      deliveryId: delivery,
    });
    expect(await stored(res.body.id)).toMatchObject({
      delivery_id: delivery,
      commit_sha: '9f3c2a1b9f3c2a1b9f3c2a1b9f3c2a1b9f3c2a1b',
      ref: 'main',
    });
  });

  it('201 stores a pushed tag, a force-push and a deleted branch with their own summaries', async () => {
    const tag = await deliver('push', JSON.stringify({ ...pushPayload, ref: 'refs/tags/v1.2.0', commits: [] })).expect(
      201,
    );
    expect(tag.body).toMatchObject({ ref: 'v1.2.0', summary: 'alice pushed tag v1.2.0' });
    const forced = await deliver(
      'push',
      JSON.stringify({ ...pushPayload, forced: true, commits: pushPayload.commits.slice(0, 1) }),
    ).expect(201);
    expect(forced.body.summary).toBe('alice force-pushed 1 commit to main');
    const deleted = {
      ...pushPayload,
      ref: 'refs/heads/old',
      deleted: true,
      after: '0'.repeat(40),
      head_commit: null,
      commits: [],
    };
    const gone = await deliver('push', JSON.stringify(deleted)).expect(201);
    expect(gone.body).toMatchObject({ ref: 'old', commit: null, summary: 'alice deleted branch old' });
  });

  it('201 stores a release: tag, action as status, a sha target as the commit', async () => {
    const release = (target: string) => ({
      action: 'published',
      release: {
        id: 9,
        tag_name: 'v1.2.0',
        target_commitish: target,
        name: 'Stores 1.2.0',
        draft: false,
        prerelease: false,
        body: 'Notes',
      },
      repository,
      sender,
    });
    const res = await deliver('release', JSON.stringify(release('main'))).expect(201);
    expect(res.body).toMatchObject({
      event: 'release',
      repository: 'acme/stores',
      ref: 'v1.2.0',
      commit: null,
      actor: 'alice',
      status: 'published',
      summary: 'release v1.2.0 published',
      message: 'Stores 1.2.0',
    });
    const pinned = await deliver('release', JSON.stringify(release('8e2b1a0c8e2b1a0c8e2b1a0c8e2b1a0c8e2b1a0c'))).expect(
      201,
    );
    expect(pinned.body.commit).toBe('8e2b1a0c8e2b1a0c8e2b1a0c8e2b1a0c8e2b1a0c');
  });

  it('201 stores a workflow run: its conclusion once completed, its status before', async () => {
    const run = (action: string, status: string, conclusion: string | null) => ({
      action,
      workflow_run: {
        id: 555,
        name: 'CI',
        display_title: 'Fix VAT rounding',
        head_branch: 'main',
        head_sha: '9f3c2a1b9f3c2a1b9f3c2a1b9f3c2a1b9f3c2a1b',
        event: 'push',
        status,
        conclusion,
        run_number: 81,
      },
      workflow: { id: 3, name: 'CI', path: '.github/workflows/ci.yml' },
      repository,
      sender,
    });
    const done = await deliver('workflow_run', JSON.stringify(run('completed', 'completed', 'success'))).expect(201);
    expect(done.body).toMatchObject({
      event: 'workflow_run',
      repository: 'acme/stores',
      ref: 'main',
      commit: '9f3c2a1b9f3c2a1b9f3c2a1b9f3c2a1b9f3c2a1b',
      actor: 'alice',
      status: 'success',
      summary: 'workflow CI completed: success',
      message: 'Fix VAT rounding',
    });
    const running = await deliver('workflow_run', JSON.stringify(run('in_progress', 'in_progress', null))).expect(201);
    expect(running.body).toMatchObject({ status: 'in_progress', summary: 'workflow CI in progress' });
  });

  it('202 ignores another event and stores nothing', async () => {
    const before = await count();
    const res = await deliver(
      'issues',
      JSON.stringify({ action: 'opened', issue: { number: 1 }, repository, sender }),
    ).expect(202);
    expect(res.body).toEqual({ message: "Event 'issues' ignored" });
    await deliver('constructor', JSON.stringify({ repository })).expect(202);
    expect(await count()).toBe(before);
  });

  it('200 on a redelivery: the same X-GitHub-Delivery is stored once and answered with the first record', async () => {
    const delivery = randomUUID();
    const body = JSON.stringify(pushPayload);
    const first = await deliver('push', body, { delivery }).expect(201);
    const again = await deliver('push', body, { delivery }).expect(200);
    expect(again.body).toEqual(first.body);
    const concurrent = randomUUID();
    const answers = await Promise.all([1, 2, 3].map(() => deliver('push', body, { delivery: concurrent })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 201]);
    expect(
      await t.db('deployment_notifications').whereIn('delivery_id', [delivery, concurrent]).count({ n: '*' }),
    ).toEqual([{ n: 2 }]);
  });

  it("415 on GitHub's form-encoded option, telling to choose application/json", async () => {
    const body = `payload=${encodeURIComponent(JSON.stringify(pushPayload))}`;
    const res = await deliver('push', body, { contentType: 'application/x-www-form-urlencoded' }).expect(415);
    expect(res.body.message).toMatch(/choose application\/json/);
  });

  it('400 on a signed malformed body, a missing event header or a push without its ref', async () => {
    const malformed = await deliver('push', '{"ref": ').expect(400);
    expect(malformed.body).toEqual({ message: 'Malformed JSON in request body' });
    const body = JSON.stringify(pushPayload);
    const noEvent = await t.request
      .post('/api/webhook/github')
      .set('Content-Type', 'application/json')
      .set('X-Hub-Signature-256', sign(body))
      .send(body)
      .expect(400);
    expect(noEvent.body).toEqual({ message: 'X-GitHub-Event header required' });
    const noRef = await deliver('push', JSON.stringify({ ...pushPayload, ref: undefined })).expect(400);
    expect(noRef.body.errors).toContainEqual(expect.objectContaining({ field: 'ref' }));
  });

  it('503 when no WEBHOOK_SECRET is configured', async () => {
    const body = JSON.stringify(pushPayload);
    const res = await unconfigured.request
      .post('/api/webhook/github')
      .set('Content-Type', 'application/json')
      .set('X-GitHub-Event', 'push')
      .set('X-Hub-Signature-256', sign(body))
      .send(body)
      .expect(503);
    expect(res.body).toEqual({ message: 'Webhooks are disabled: WEBHOOK_SECRET is not configured' });
  });
});
