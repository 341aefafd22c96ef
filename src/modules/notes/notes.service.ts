import type { Db } from '../../db/knex';
import { BadRequest, Forbidden, NotFound } from '../../http/errors';
import { withUserRef } from '../users/users.queries';
import { NOTE_REFERENCE_TYPES, noteRecordExists, type NoteReferenceType } from './notes.references';

/** 'refund': the note a refund writes on its sale, part of the sale's record; 'note': any other. */
export type NoteKind = 'note' | 'refund';

export const REFUND_NOTE_FIXED = "A refund note is part of the sale's record and cannot be changed";

export type NoteRow = {
  id: number;
  text: string;
  kind: NoteKind;
  reference_type: string;
  reference_id: string;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
};

export type NewNote = {
  text: string;
  referenceType: string;
  referenceId: string;
  createdBy: string | null;
  kind?: NoteKind;
};

/**
 * Core note writes other modules use (a refund note, a bulk note); the notes API builds on it.
 * A refund note (kind 'refund', on a sale) can never be edited or deleted afterwards: this
 * service refuses (403) and database triggers refuse any other path.
 */
async function insertNote(db: Db, note: NewNote): Promise<NoteRow> {
  const [row] = await db<NoteRow>('notes')
    .insert({
      text: note.text,
      kind: note.kind ?? 'note',
      reference_type: note.referenceType,
      reference_id: note.referenceId,
      created_by: note.createdBy,
    })
    .returning('*');
  return row;
}

/** Whether this person may change or delete a note: its author or an admin (the service's check, and the pages' buttons). */
export const mayChangeNote = (note: { created_by: string | null }, person: { id: string; role: string }): boolean =>
  note.created_by === person.id || person.role === 'admin';

export function notesService(db: Db) {
  return {
    add: (note: NewNote): Promise<NoteRow> => insertNote(db, note),

    /** The notes API: list, read, edit, delete and counts. */
    ...notesQueries(db),

    /** Removes the notes of entities that are being deleted with them. */
    async removeAllFor(referenceType: string, referenceIds: string[]): Promise<void> {
      await db('notes').where('reference_type', referenceType).whereIn('reference_id', referenceIds).delete();
    },

    async addMany(notes: NewNote[]): Promise<number> {
      if (notes.length === 0) return 0;
      const rows = await db('notes')
        .insert(
          notes.map((n) => ({
            text: n.text,
            reference_type: n.referenceType,
            reference_id: n.referenceId,
            created_by: n.createdBy,
          })),
        )
        .returning('id');
      return rows.length;
    },
  };
}

export type NoteReadRow = NoteRow & {
  creator_email: string | null;
  creator_first_name: string | null;
  creator_last_name: string | null;
};

export const isKnownReferenceType = (type: string): type is NoteReferenceType =>
  (NOTE_REFERENCE_TYPES as readonly string[]).includes(type);

export function assertReferenceType(type: string): asserts type is NoteReferenceType {
  if (!isKnownReferenceType(type)) {
    throw BadRequest(`Unknown referenceType '${type}'. Known types: ${NOTE_REFERENCE_TYPES.join(', ')}`);
  }
}

function notesQueries(db: Db) {
  const read = () =>
    withUserRef(db('notes as n').select<NoteReadRow[]>('n.*'), {
      userIdColumn: 'n.created_by',
      prefix: 'creator_',
    });

  async function getRead(id: number): Promise<NoteReadRow> {
    const row = await read().where('n.id', id).first();
    if (!row) throw NotFound('Note not found');
    return row;
  }

  /** 400 for an unknown type, 404 when the entity does not exist. */
  async function assertReference(type: string, id: string): Promise<void> {
    assertReferenceType(type);
    if (!(await noteRecordExists(type, db, id))) throw NotFound(`${type.replace(/_/g, ' ')} '${id}' not found`);
  }

  /** Only the creator or an admin may change a note, and nobody a refund note. */
  async function editable(id: number, actor: { id: string; role: string }): Promise<NoteRow> {
    const row = await db<NoteRow>('notes').where({ id }).first();
    if (!row) throw NotFound('Note not found');
    if (row.kind === 'refund') throw Forbidden(REFUND_NOTE_FIXED);
    if (!mayChangeNote(row, actor)) throw Forbidden('Only the author of a note or an admin may change it');
    return row;
  }

  /** newest first; 400 for an unknown referenceType */
  async function list(filter: { referenceType?: string; referenceId?: string; limit: number }): Promise<NoteReadRow[]> {
    if (filter.referenceType !== undefined) assertReferenceType(filter.referenceType);
    const query = read()
      .orderBy([
        { column: 'n.created_at', order: 'desc' },
        { column: 'n.id', order: 'desc' },
      ])
      .limit(filter.limit);
    if (filter.referenceType !== undefined) query.where('n.reference_type', filter.referenceType);
    if (filter.referenceId !== undefined) query.where('n.reference_id', filter.referenceId);
    return query;
  }

  return {
    getRead,
    assertReference,
    list,

    /** A record's notes, newest first (at most 500); 400 for an unknown type, 404 when the record does not exist. */
    async listFor(referenceType: string, referenceId: string): Promise<NoteReadRow[]> {
      await assertReference(referenceType, referenceId);
      return list({ referenceType, referenceId, limit: 500 });
    },

    async create(note: NewNote): Promise<NoteReadRow> {
      await assertReference(note.referenceType, note.referenceId);
      return getRead((await insertNote(db, note)).id);
    },

    async update(id: number, text: string, actor: { id: string; role: string }): Promise<NoteReadRow> {
      await editable(id, actor);
      await db('notes').where({ id }).update({ text, updated_at: db.fn.now() });
      return getRead(id);
    },

    async remove(id: number, actor: { id: string; role: string }): Promise<void> {
      await editable(id, actor);
      await db('notes').where({ id }).delete();
    },

    /** 400 for an unknown referenceType */
    async count(referenceType: string, referenceId: string): Promise<number> {
      assertReferenceType(referenceType);
      const [{ count }] = await db('notes')
        .where({ reference_type: referenceType, reference_id: referenceId })
        .count<{ count: number }[]>('* as count');
      return count;
    },

    /** counts for many ids of one type; ids without notes answer 0; 400 for an unknown referenceType */
    async countMany(referenceType: string, referenceIds: string[]): Promise<Record<string, number>> {
      assertReferenceType(referenceType);
      const counts: Record<string, number> = {};
      for (const id of referenceIds) counts[id] = 0;
      if (referenceIds.length === 0) return counts;
      const rows = await db('notes')
        .where('reference_type', referenceType)
        .where('reference_id', db.raw('ANY(?::text[])', [[...new Set(referenceIds)]]))
        .groupBy('reference_id')
        .select<{ reference_id: string; count: number }[]>('reference_id', db.raw('count(*)::int AS count'));
      for (const r of rows) counts[r.reference_id] = r.count;
      return counts;
    },
  };
}
