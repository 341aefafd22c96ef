// Security review, finding 12 (issue 14): the note a refund writes is part of the sale's record.
// Nobody, its author and admins included, may edit or delete it (403), and the database refuses
// it on any other path; other notes behave as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as notesKind from '../migrations/20261123000600_notes_kind';
import { testApp, type TestApp } from './helpers/app';
import { buildItem } from './helpers/factories';
import { agentsByRole, type Agents } from './helpers/inventory-factories';
import { buildChargeCode, grantPermission } from './helpers/sales-factories';

const FIXED = "A refund note is part of the sale's record and cannot be changed";

let t: TestApp;
let as: Agents;
let item: { id: number };
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
  // the clerk refunds, so the refund note's author is not an admin
  await grantPermission(t.db, as.ids.user, 'sales.refund');
  await buildChargeCode(t.db, { code: 'NOTE-001' });
  item = await buildItem(t.db, { price: '4.00', currentStock: 100 });
});
afterAll(() => t.close());

/** A sale of 3 by the clerk, 1 refunded by the clerk: answers the sale and its refund note. */
async function refundedSale(note = 'damaged box') {
  const sale = (
    await as.user
      .post('/api/sales')
      .send({ chargeCode: 'NOTE-001', items: [{ itemId: item.id, quantity: 3 }] })
      .expect(201)
  ).body.sale;
  await as.user
    .patch(`/api/sales/${sale.id}/refund`)
    .send({ items: [{ itemId: item.id, refundQty: 1 }], note })
    .expect(200);
  const notes = (await as.user.get(`/api/notes/sale/${sale.id}`).expect(200)).body as {
    id: number;
    kind: string;
    text: string;
  }[];
  expect(notes).toHaveLength(1);
  return { sale: sale as { id: number; saleId: string }, refundNote: notes[0] };
}

const rowOf = (id: number) => t.db('notes').where({ id }).first();

describe('PUT and DELETE /api/notes/:id on a refund note', () => {
  it('403 for its author and for an admin, and the note is unchanged', async () => {
    const { sale, refundNote } = await refundedSale();
    expect(refundNote).toMatchObject({
      kind: 'refund',
      createdBy: as.ids.user,
      referenceType: 'sale',
      referenceId: String(sale.id),
    });
    expect(refundNote.text).toMatch(new RegExp(`^Refund on sale ${sale.saleId}: .* Note: damaged box$`));
    const before = await rowOf(refundNote.id);
    expect(before).toMatchObject({ kind: 'refund' });

    for (const agent of [as.user, as.admin]) {
      const put = await agent.put(`/api/notes/${refundNote.id}`).send({ text: 'nothing was refunded' }).expect(403);
      expect(put.body.message).toBe(FIXED);
      const del = await agent.delete(`/api/notes/${refundNote.id}`).expect(403);
      expect(del.body.message).toBe(FIXED);
    }
    // someone else gets the same answer, not "only the author"
    expect((await as.manager.delete(`/api/notes/${refundNote.id}`).expect(403)).body.message).toBe(FIXED);
    expect(await rowOf(refundNote.id)).toEqual(before);
  });

  it('another note on the same sale is edited and deleted as before', async () => {
    const { sale, refundNote } = await refundedSale();
    const other = (
      await as.user
        .post('/api/notes')
        .send({ text: 'called the lab', referenceType: 'sale', referenceId: sale.id })
        .expect(201)
    ).body;
    expect(other.kind).toBe('note');
    expect(
      (await as.user.put(`/api/notes/${other.id}`).send({ text: 'called the lab twice' }).expect(200)).body,
    ).toMatchObject({ text: 'called the lab twice', kind: 'note' });
    expect((await as.admin.put(`/api/notes/${other.id}`).send({ text: 'by admin' }).expect(200)).body.text).toBe(
      'by admin',
    );
    expect((await as.manager.put(`/api/notes/${other.id}`).send({ text: 'x' }).expect(403)).body.message).toBe(
      'Only the author of a note or an admin may change it',
    );
    await as.user.delete(`/api/notes/${other.id}`).expect(204);
    expect(await rowOf(other.id)).toBeUndefined();
    expect(await rowOf(refundNote.id)).toMatchObject({ kind: 'refund' });
  });

  it('a note cannot be created as a refund note through the API', async () => {
    const { sale } = await refundedSale();
    const res = await as.admin
      .post('/api/notes')
      .send({ text: 'Refund on sale X', kind: 'refund', referenceType: 'sale', referenceId: sale.id })
      .expect(201);
    expect(res.body.kind).toBe('note');
    await as.admin.delete(`/api/notes/${res.body.id}`).expect(204);
  });
});

describe('the database keeps a refund note', () => {
  it('refuses an UPDATE or a DELETE from any code path; the row is unchanged', async () => {
    const { refundNote } = await refundedSale();
    const before = await rowOf(refundNote.id);
    await expect(t.db('notes').where({ id: refundNote.id }).update({ text: 'rewritten' })).rejects.toThrow(FIXED);
    await expect(t.db('notes').where({ id: refundNote.id }).update({ kind: 'note' })).rejects.toThrow(FIXED);
    await expect(t.db('notes').where({ id: refundNote.id }).delete()).rejects.toThrow(FIXED);
    expect(await rowOf(refundNote.id)).toEqual(before);
  });

  it('lets its author be deleted (created_by SET NULL) and lets it go with its sale in one transaction', async () => {
    const { sale, refundNote } = await refundedSale();
    await t.db('notes').where({ id: refundNote.id }).update({ created_by: null });
    expect(await rowOf(refundNote.id)).toMatchObject({ created_by: null, kind: 'refund' });
    // an archive purge deletes the sale's notes, then the sale
    await t.db.transaction(async (trx) => {
      await trx('notes').where({ id: refundNote.id }).delete();
      await trx('sales').where({ id: sale.id }).delete();
    });
    expect(await rowOf(refundNote.id)).toBeUndefined();
  });
});

describe('migration 20261123000600_notes_kind', () => {
  it('marks the refund notes written before it, and no other note', async () => {
    const { sale, refundNote } = await refundedSale();
    const lookalike = (
      await as.user
        .post('/api/notes')
        .send({
          text: `Refund on sale SALE-OTHER: 1 x Thing. Amount refunded: 1.00 (total refunded 1.00 of 2.00).`,
          referenceType: 'sale',
          referenceId: sale.id,
        })
        .expect(201)
    ).body;
    const unrefunded = (
      await as.user
        .post('/api/sales')
        .send({ chargeCode: 'NOTE-001', items: [{ itemId: item.id, quantity: 1 }] })
        .expect(201)
    ).body.sale;
    const onUnrefunded = (
      await as.user
        .post('/api/notes')
        .send({
          text: `Refund on sale ${unrefunded.saleId}: 1 x Thing. Amount refunded: 4.00 (total refunded 4.00 of 4.00).`,
          referenceType: 'sale',
          referenceId: unrefunded.id,
        })
        .expect(201)
    ).body;

    await notesKind.down(t.db);
    await notesKind.up(t.db);

    const kinds = Object.fromEntries(
      (await t.db('notes').whereIn('id', [refundNote.id, lookalike.id, onUnrefunded.id]).select('id', 'kind')).map(
        (r: { id: number; kind: string }) => [r.id, r.kind],
      ),
    );
    expect(kinds).toEqual({ [refundNote.id]: 'refund', [lookalike.id]: 'note', [onUnrefunded.id]: 'note' });
    await as.admin.delete(`/api/notes/${refundNote.id}`).expect(403);
    await as.user.delete(`/api/notes/${lookalike.id}`).expect(204);
  });
});
