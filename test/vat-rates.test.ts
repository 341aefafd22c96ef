import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildItem } from './helpers/factories';
import { agentsByRole, type Agents } from './helpers/inventory-factories';

let t: TestApp;
let as: Agents;
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
});
afterAll(() => t.close());

const defaults = () => t.db('vat_rates').where({ is_default: true });

describe('GET /api/settings/vat-rates', () => {
  it('200 lists the rates, the default first', async () => {
    // Other tests of this file change the default; whichever it is now comes first, and only it.
    const current = await t.db('vat_rates').where({ is_default: true }).first();
    const res = await as.admin.get('/api/settings/vat-rates').expect(200);
    expect(res.body.rates[0]).toMatchObject({
      id: current.id,
      name: current.name,
      rate: Number(current.rate),
      isDefault: true,
    });
    expect(res.body.rates.filter((r: { isDefault: boolean }) => r.isDefault)).toHaveLength(1);
  });
  it('401 without a session; 403 for a manager', async () => {
    await t.request.get('/api/settings/vat-rates').expect(401);
    await as.manager.get('/api/settings/vat-rates').expect(403);
  });
});

describe('POST /api/settings/vat-rates', () => {
  it('201 creates a rate', async () => {
    const res = await as.admin.post('/api/settings/vat-rates').send({ name: 'Reduced', rate: 0.05 }).expect(201);
    expect(res.body).toMatchObject({ name: 'Reduced', rate: 0.05, isDefault: false });
  });
  it('201 with isDefault true makes it the only default, and items without a rate follow it', async () => {
    const item = await buildItem(t.db);
    const res = await as.admin
      .post('/api/settings/vat-rates')
      .send({ name: 'New standard', rate: '0.175', isDefault: true })
      .expect(201);
    expect(await defaults()).toEqual([expect.objectContaining({ id: res.body.id })]);
    expect((await as.user.get(`/api/items/${item.id}`).expect(200)).body.vatRate).toBe('0.1750');
  });
  it('400 for a rate outside 0..1, a missing name, or too many places', async () => {
    await as.admin.post('/api/settings/vat-rates').send({ name: 'Bad', rate: 1.5 }).expect(400);
    await as.admin.post('/api/settings/vat-rates').send({ name: 'Bad', rate: -0.1 }).expect(400);
    await as.admin.post('/api/settings/vat-rates').send({ rate: 0.1 }).expect(400);
    await as.admin.post('/api/settings/vat-rates').send({ name: 'Bad', rate: 0.123456 }).expect(400);
  });
  it('403 for a manager', () => as.manager.post('/api/settings/vat-rates').send({ name: 'x', rate: 0.1 }).expect(403));
});

describe('PUT /api/settings/vat-rates/:rateId', () => {
  it('200 updates; making one default clears the other', async () => {
    const created = await as.admin.post('/api/settings/vat-rates').send({ name: 'Zero', rate: 0 }).expect(201);
    const res = await as.admin
      .put(`/api/settings/vat-rates/${created.body.id}`)
      .send({ name: 'Zero rated', isDefault: true })
      .expect(200);
    expect(res.body).toMatchObject({ name: 'Zero rated', rate: 0, isDefault: true });
    expect(await defaults()).toEqual([expect.objectContaining({ id: created.body.id })]);
  });
  it('400 when unsetting the default or for an invalid rate; 404 unknown; 403 manager', async () => {
    const [current] = await defaults();
    await as.admin.put(`/api/settings/vat-rates/${current.id}`).send({ isDefault: false }).expect(400);
    await as.admin.put(`/api/settings/vat-rates/${current.id}`).send({ rate: 2 }).expect(400);
    await as.admin.put('/api/settings/vat-rates/999999').send({ name: 'x' }).expect(404);
    await as.manager.put(`/api/settings/vat-rates/${current.id}`).send({ name: 'x' }).expect(403);
  });
});

describe('DELETE /api/settings/vat-rates/:rateId', () => {
  it('204 deletes a non-default rate', async () => {
    const created = await as.admin.post('/api/settings/vat-rates').send({ name: 'Temp', rate: 0.1 }).expect(201);
    await as.admin.delete(`/api/settings/vat-rates/${created.body.id}`).expect(204);
    expect(await t.db('vat_rates').where({ id: created.body.id }).first()).toBeUndefined();
  });
  it('400 for the default rate; 404 unknown; 403 manager', async () => {
    const [current] = await defaults();
    const res = await as.admin.delete(`/api/settings/vat-rates/${current.id}`).expect(400);
    expect(res.body.message).toBe('The default VAT rate cannot be deleted');
    await as.admin.delete('/api/settings/vat-rates/999999').expect(404);
    await as.manager.delete(`/api/settings/vat-rates/${current.id}`).expect(403);
  });
});
