import type { Db } from '../../db/knex';

export type NoteRow = {
  id: number;
  text: string;
  reference_type: string;
  reference_id: string;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
};

export type NewNote = { text: string; referenceType: string; referenceId: string; createdBy: string | null };

/** Core note writes other modules use (a refund note, a bulk note); the notes API builds on it. */
export function notesService(db: Db) {
  return {
    async add(note: NewNote): Promise<NoteRow> {
      const [row] = await db<NoteRow>('notes')
        .insert({ text: note.text, reference_type: note.referenceType, reference_id: note.referenceId, created_by: note.createdBy })
        .returning('*');
      return row;
    },

    async addMany(notes: NewNote[]): Promise<number> {
      if (notes.length === 0) return 0;
      const rows = await db('notes')
        .insert(notes.map((n) => ({ text: n.text, reference_type: n.referenceType, reference_id: n.referenceId, created_by: n.createdBy })))
        .returning('id');
      return rows.length;
    },
  };
}
