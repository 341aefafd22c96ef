import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { buildMcpKey } from './helpers/mcp-factories';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
  await buildCategory(t.db, { name: 'Bulk' });
});
afterAll(() => t.close());

const MB = 1024 * 1024;
const item = (sku: string) => ({ name: `Item ${sku}`, sku, categoryName: 'bulk', price: '2.50', currentStock: 3 });
/** a JSON import of two items padded (with a key the schema drops) to about `size` bytes */
const paddedImport = (skus: string[], size: number) =>
  JSON.stringify({ items: skus.map(item), padding: 'x'.repeat(size) });

describe('POST /api/items/bulk-import: the 10 MB body is read only for a signed-in user', () => {
  it('401 for an anonymous 5 MB body, before it is parsed: malformed JSON is not even noticed', async () => {
    const valid = await t.request
      .post('/api/items/bulk-import')
      .set('Content-Type', 'application/json')
      .send(paddedImport(['ANON-1'], 5 * MB))
      .expect(401);
    expect(valid.body).toEqual({ message: 'Authentication required' });
    const malformed = await t.request
      .post('/api/items/bulk-import')
      .set('Content-Type', 'application/json')
      .send(`{"items": [${'x'.repeat(5 * MB)}`)
      .expect(401);
    expect(malformed.body).toEqual({ message: 'Authentication required' });
    const oversized = await t.request
      .post('/api/items/bulk-import')
      .set('Content-Type', 'application/json')
      .send(`{"p":"${'x'.repeat(11 * MB)}"}`)
      .expect(401);
    expect(oversized.body).toEqual({ message: 'Authentication required' });
    const invalidToken = await t.request
      .post('/api/items/bulk-import')
      .set('Authorization', 'Bearer sst_not-a-token')
      .set('Content-Type', 'application/json')
      .send(`{"items": [${'x'.repeat(2 * MB)}`)
      .expect(401);
    expect(invalidToken.body).toEqual({ message: 'Invalid or expired token' });
    expect(await t.db('items').where({ sku: 'ANON-1' }).first()).toBeUndefined();
  });

  it("200 for a manager's 5 MB import, which is parsed and imported", async () => {
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    const res = await manager
      .post('/api/items/bulk-import')
      .set('Content-Type', 'application/json')
      .send(paddedImport(['BIG-1', 'BIG-2'], 5 * MB))
      .expect(200);
    expect(res.body).toEqual({ successful: 2, failed: 0, errors: [] });
    expect(await t.db('items').whereIn('sku', ['BIG-1', 'BIG-2']).orderBy('sku').pluck('current_stock')).toEqual([
      '3.00',
      '3.00',
    ]);
    // malformed JSON from a signed-in user is parsed, and refused as such
    const malformed = await manager
      .post('/api/items/bulk-import')
      .set('Content-Type', 'application/json')
      .send('{"items": [')
      .expect(400);
    expect(malformed.body).toEqual({ message: 'Malformed JSON in request body' });
    // over 10 MB is still 413
    await manager
      .post('/api/items/bulk-import')
      .set('Content-Type', 'application/json')
      .send(`{"p":"${'x'.repeat(11 * MB)}"}`)
      .expect(413);
  });

  it('other API routes keep their 1 MB limit, and NUL characters are refused in the bulk body too', async () => {
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    await manager
      .post('/api/categories')
      .set('Content-Type', 'application/json')
      .send(`{"name":"${'x'.repeat(2 * MB)}"}`)
      .expect(413);
    const nul = await manager
      .post('/api/items/bulk-import')
      .send({ items: [{ ...item('NUL-1'), name: 'a\u0000b' }] })
      .expect(400);
    expect(nul.body.errors[0].message).toMatch(/NUL|null/i);
  });
});

describe('A deeply nested JSON body is refused with 400 before anything walks it', () => {
  /** 3,000 `[` then 3,000 `]`: 6 KB that nests 3,000 levels */
  const deepArray = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  const TOO_DEEP = { message: 'Request body is nested too deeply (more than 64 levels)' };

  it('400 on the public sign-in, nothing signed in', async () => {
    const res = await t.request
      .post('/api/auth/login')
      .set('Content-Type', 'application/json')
      .send(deepArray(3_000))
      .expect(400);
    expect(res.body).toEqual(TOO_DEEP);
    const set = res.get('Set-Cookie');
    expect((set ?? []).some((c) => c.startsWith('connect.sid'))).toBe(false);
  });

  it('400 on a signed-in route and on bulk import (its 10 MB parser); 64 levels are still read, brackets inside strings do not count', async () => {
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    const itemsBefore = await t.db('items').count({ n: '*' }).first();
    expect(
      (await manager.post('/api/items').set('Content-Type', 'application/json').send(deepArray(3_000)).expect(400))
        .body,
    ).toEqual(TOO_DEEP);
    const deepItems = `{"items": [${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}]}`;
    expect(
      (await manager.post('/api/items/bulk-import').set('Content-Type', 'application/json').send(deepItems).expect(400))
        .body,
    ).toEqual(TOO_DEEP);
    // one level over the limit is refused; at the limit (and with brackets in strings) the body reaches the route's own validation
    expect(
      (await manager.post('/api/items').set('Content-Type', 'application/json').send(deepArray(65)).expect(400)).body,
    ).toEqual(TOO_DEEP);
    const atLimit = await manager
      .post('/api/items')
      .set('Content-Type', 'application/json')
      .send(`{"name": "[[[{{{\\"[[", "extra": ${deepArray(63)}}`)
      .expect(400);
    expect(atLimit.body.message).toBe('Validation failed');
    expect(await t.db('items').count({ n: '*' }).first()).toEqual(itemsBefore);
  });

  it('400 in the MCP error format on POST /mcp', async () => {
    const admin = await buildUser(t.db, { role: 'admin' });
    const { key } = await buildMcpKey(t.db, { createdBy: admin.id });
    const res = await t.request
      .post('/mcp')
      .set({
        Authorization: `Bearer ${key}`,
        Accept: 'application/json, text/event-stream',
        'Content-Type': 'application/json',
      })
      .send(deepArray(3_000))
      .expect(400);
    expect(res.body.error).toMatchObject({ code: 'MCP_INVALID_REQUEST', message: TOO_DEEP.message });
  });
});
