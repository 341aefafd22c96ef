import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildItem } from './helpers/factories';
import { agentsByRole, type Agents } from './helpers/inventory-factories';

let t: TestApp;
let as: Agents;
let item: { id: number };
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
  item = await buildItem(t.db);
});
afterAll(() => t.close());

const addNote = async (agent: Agents['user'], text: string, referenceId: string | number = item.id) =>
  (await agent.post('/api/notes').send({ text, referenceType: 'item', referenceId }).expect(201)).body;

describe('POST /api/notes', () => {
  it('201 creates a note with the author in both forms', async () => {
    const note = await addNote(as.user, 'Check the seal', item.id);
    expect(note).toMatchObject({
      text: 'Check the seal',
      referenceType: 'item',
      referenceId: String(item.id),
      createdBy: as.ids.user,
      creator: { id: as.ids.user },
    });
    expect(await t.db('notes').where({ id: note.id }).first()).toBeDefined();
  });
  it('400 for missing fields or an unknown referenceType', async () => {
    const res = await as.user.post('/api/notes').send({ referenceType: 'item' }).expect(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(
      expect.arrayContaining(['text', 'referenceId']),
    );
    const unknown = await as.user
      .post('/api/notes')
      .send({ text: 'x', referenceType: 'spaceship', referenceId: '1' })
      .expect(400);
    expect(unknown.body.message).toContain("Unknown referenceType 'spaceship'");
  });
  it('404 when the referenced item does not exist', () =>
    as.user.post('/api/notes').send({ text: 'x', referenceType: 'item', referenceId: '999999' }).expect(404));
  it('401 without a session', () =>
    t.request.post('/api/notes').send({ text: 'x', referenceType: 'item', referenceId: '1' }).expect(401));
});

describe('GET /api/notes and /api/notes/:referenceType/:referenceId', () => {
  it('200 lists the notes of a record, newest first', async () => {
    const own = await buildItem(t.db);
    const first = await addNote(as.user, 'first', own.id);
    const second = await addNote(as.manager, 'second', own.id);
    const res = await as.user.get(`/api/notes/item/${own.id}`).expect(200);
    expect(res.body.map((n: { id: number }) => n.id)).toEqual([second.id, first.id]);
    const filtered = await as.user.get(`/api/notes?referenceType=item&referenceId=${own.id}`).expect(200);
    expect(filtered.body).toHaveLength(2);
    expect((await as.user.get('/api/notes').expect(200)).body.length).toBeGreaterThanOrEqual(2);
  });
  it('404 for a missing entity; 400 unknown type; 401 without a session', async () => {
    expect((await as.user.get('/api/notes/item/999999').expect(404)).body).toEqual({
      message: "item '999999' not found",
    });
    const unknownType = {
      message: "Unknown referenceType 'spaceship'. Known types: item, vendor, order, sale, charge_code",
    };
    expect((await as.user.get('/api/notes/spaceship/1').expect(400)).body).toEqual(unknownType);
    expect((await as.user.get('/api/notes?referenceType=spaceship').expect(400)).body).toEqual(unknownType);
    expect((await t.request.get('/api/notes').expect(401)).body).toEqual({ message: 'Authentication required' });
  });
});

describe('PUT /api/notes/:id', () => {
  it('200 for the author and for an admin', async () => {
    const note = await addNote(as.user, 'draft');
    expect((await as.user.put(`/api/notes/${note.id}`).send({ text: 'edited' }).expect(200)).body.text).toBe('edited');
    const byAdmin = await as.admin.put(`/api/notes/${note.id}`).send({ text: 'by admin' }).expect(200);
    expect(byAdmin.body).toMatchObject({ id: note.id, text: 'by admin', createdBy: note.createdBy });
    expect((await t.db('notes').where({ id: note.id }).first()).text).toBe('by admin');
  });
  it('403 for another non-admin user; 400 empty text; 404 unknown', async () => {
    const note = await addNote(as.user, 'mine');
    expect((await as.manager.put(`/api/notes/${note.id}`).send({ text: 'theirs' }).expect(403)).body).toEqual({
      message: 'Only the author of a note or an admin may change it',
    });
    const empty = await as.user.put(`/api/notes/${note.id}`).send({ text: '' }).expect(400);
    expect(empty.body.errors).toContainEqual(expect.objectContaining({ field: 'text' }));
    expect((await as.user.put('/api/notes/999999').send({ text: 'x' }).expect(404)).body).toEqual({
      message: 'Note not found',
    });
    expect((await t.db('notes').where({ id: note.id }).first()).text).toBe('mine');
  });
});

describe('DELETE /api/notes/:id', () => {
  it('204 for the author; 403 for someone else; 404 unknown; 204 for an admin', async () => {
    const a = await addNote(as.user, 'a');
    const b = await addNote(as.user, 'b');
    expect((await as.manager.delete(`/api/notes/${a.id}`).expect(403)).body).toEqual({
      message: 'Only the author of a note or an admin may change it',
    });
    expect(await t.db('notes').where({ id: a.id }).first()).toBeDefined();
    expect((await as.user.delete(`/api/notes/${a.id}`).expect(204)).text).toBe('');
    await as.admin.delete(`/api/notes/${b.id}`).expect(204);
    expect((await as.user.delete('/api/notes/999999').expect(404)).body).toEqual({ message: 'Note not found' });
    expect(await t.db('notes').whereIn('id', [a.id, b.id])).toHaveLength(0);
  });
});

describe('GET /api/notes/count/:referenceType/:referenceId and POST /api/notes/counts/batch', () => {
  it('200 counts one record and many', async () => {
    const x = await buildItem(t.db);
    const y = await buildItem(t.db);
    await addNote(as.user, '1', x.id);
    await addNote(as.user, '2', x.id);
    expect((await as.user.get(`/api/notes/count/item/${x.id}`).expect(200)).body).toEqual({ count: 2 });
    const res = await as.user
      .post('/api/notes/counts/batch')
      .send({ referenceType: 'item', referenceIds: [String(x.id), y.id] })
      .expect(200);
    expect(res.body).toEqual({ counts: { [x.id]: 2, [y.id]: 0 } });
  });
  it('400 for an unknown type or a missing referenceIds; 401 without a session', async () => {
    expect((await as.user.get('/api/notes/count/spaceship/1').expect(400)).body.message).toMatch(
      /^Unknown referenceType 'spaceship'/,
    );
    const missing = await as.user.post('/api/notes/counts/batch').send({ referenceType: 'item' }).expect(400);
    expect(missing.body.errors).toContainEqual(expect.objectContaining({ field: 'referenceIds' }));
    const unknown = await as.user
      .post('/api/notes/counts/batch')
      .send({ referenceType: 'spaceship', referenceIds: ['1'] })
      .expect(400);
    expect(unknown.body.message).toMatch(/^Unknown referenceType 'spaceship'/);
    expect((await t.request.get('/api/notes/count/item/1').expect(401)).body).toEqual({
      message: 'Authentication required',
    });
  });
});

describe('GET /api/notes/:referenceType/:referenceId for the other record types', () => {
  it('404 for a missing sale, order, charge code or vendor (each type is registered)', async () => {
    for (const type of ['sale', 'order', 'charge_code', 'vendor']) {
      const res = await as.user.get(`/api/notes/${type}/999999`).expect(404);
      expect(res.body).toEqual({ message: `${type.replace('_', ' ')} '999999' not found` });
    }
  });
});
