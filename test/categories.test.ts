import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem } from './helpers/factories';
import { agentsByRole, type Agents } from './helpers/inventory-factories';

let t: TestApp;
let as: Agents;
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
});
afterAll(() => t.close());

describe('GET /api/categories', () => {
  it('401 without a session', () => t.request.get('/api/categories').expect(401));
  it('200 lists categories by name', async () => {
    await buildCategory(t.db, { name: 'Zinc things' });
    await buildCategory(t.db, { name: 'Adhesives', icon: 'fa-glue', color: 'green', description: 'Sticky' });
    const res = await as.user.get('/api/categories').expect(200);
    const names = res.body.map((c: { name: string }) => c.name);
    expect(names.indexOf('Adhesives')).toBeLessThan(names.indexOf('Zinc things'));
    expect(res.body.find((c: { name: string }) => c.name === 'Adhesives')).toMatchObject({
      id: expect.any(Number),
      description: 'Sticky',
      icon: 'fa-glue',
      color: 'green',
      createdAt: expect.any(String),
    });
  });
});

describe('POST /api/categories', () => {
  it('201 creates and answers the category', async () => {
    const res = await as.manager
      .post('/api/categories')
      .send({ name: 'Optics', description: 'Lenses', icon: 'fa-eye', color: 'purple' })
      .expect(201);
    expect(res.body).toMatchObject({ name: 'Optics', description: 'Lenses', icon: 'fa-eye', color: 'purple' });
    expect(await t.db('categories').where({ id: res.body.id }).first()).toBeDefined();
  });
  it('400 without a name', () => as.manager.post('/api/categories').send({ description: 'x' }).expect(400));
  it('409 for a name already used, ignoring case', async () => {
    await buildCategory(t.db, { name: 'Electronics' });
    const res = await as.manager.post('/api/categories').send({ name: 'ELECTRONICS' }).expect(409);
    expect(res.body.message).toContain('ELECTRONICS');
  });
  it('403 for a user', () => as.user.post('/api/categories').send({ name: 'Nope' }).expect(403));
});

describe('PUT /api/categories/:id', () => {
  it('200 updates the given fields', async () => {
    const c = await buildCategory(t.db);
    const res = await as.manager.put(`/api/categories/${c.id}`).send({ color: 'red' }).expect(200);
    expect(res.body).toMatchObject({ id: c.id, name: c.name, color: 'red' });
  });
  it('400 for an empty body; 404 unknown; 409 name clash; 403 user', async () => {
    const c = await buildCategory(t.db);
    const other = await buildCategory(t.db);
    await as.manager.put(`/api/categories/${c.id}`).send({}).expect(400);
    await as.manager.put('/api/categories/999999').send({ name: 'x' }).expect(404);
    await as.manager.put(`/api/categories/${c.id}`).send({ name: other.name.toUpperCase() }).expect(409);
    await as.user.put(`/api/categories/${c.id}`).send({ name: 'x' }).expect(403);
  });
});

describe('DELETE /api/categories/:id', () => {
  it('204 deletes an unused category', async () => {
    const c = await buildCategory(t.db);
    await as.admin.delete(`/api/categories/${c.id}`).expect(204);
    expect(await t.db('categories').where({ id: c.id }).first()).toBeUndefined();
  });
  it('409 while items (even inactive ones) use it', async () => {
    const c = await buildCategory(t.db, { name: 'In use' });
    await buildItem(t.db, { categoryId: c.id, isActive: false });
    const res = await as.admin.delete(`/api/categories/${c.id}`).expect(409);
    expect(res.body).toMatchObject({
      message: "Cannot delete category 'In use': 1 item(s) still use it",
      itemCount: 1,
    });
  });
  it('403 for a manager; 404 unknown', async () => {
    const c = await buildCategory(t.db);
    await as.manager.delete(`/api/categories/${c.id}`).expect(403);
    await as.admin.delete('/api/categories/999999').expect(404);
  });
});

describe('GET /api/categories/:id/deletion-check and DELETE /api/categories/:id/safe', () => {
  it('200 canDelete and 204 for an unused category', async () => {
    const c = await buildCategory(t.db);
    expect((await as.admin.get(`/api/categories/${c.id}/deletion-check`).expect(200)).body).toEqual({
      canDelete: true,
      reasons: [],
    });
    await as.admin.delete(`/api/categories/${c.id}/safe`).expect(204);
  });
  it('409 with reasons when items reference it', async () => {
    const c = await buildCategory(t.db);
    await buildItem(t.db, { categoryId: c.id });
    const check = await as.admin.get(`/api/categories/${c.id}/deletion-check`).expect(200);
    expect(check.body).toEqual({
      canDelete: false,
      reasons: [expect.stringMatching(/^items: 1 record\(s\) reference it/)],
    });
    const res = await as.admin.delete(`/api/categories/${c.id}/safe`).expect(409);
    expect(res.body.reasons).toEqual(check.body.reasons);
  });
  it('403 for a manager; 404 unknown', async () => {
    const c = await buildCategory(t.db);
    await as.manager.get(`/api/categories/${c.id}/deletion-check`).expect(403);
    await as.manager.delete(`/api/categories/${c.id}/safe`).expect(403);
    await as.admin.get('/api/categories/999999/deletion-check').expect(404);
    await as.admin.delete('/api/categories/999999/safe').expect(404);
  });
});
