import type { Request } from 'express';
import { currentUser } from '../auth/guards';
import { parse } from '../http/validate';
import type { Db } from '../db/knex';
import { presentNote } from '../modules/notes/notes.present';
import { CreateNote } from '../modules/notes/notes.schemas';
import { notesService } from '../modules/notes/notes.service';
import { attempt, flash, textField, type ReturnedForm } from './forms';

/**
 * The notes section of a record's page (an item, a sale, a charge code), rendered by
 * views/partials/_notes.ejs: the record's notes and adding one, through the notes API's service and schema.
 */
export function notesSection(db: Db) {
  const notes = notesService(db);
  return {
    /**
     * The record's notes as the API presents them. Where the page offers editing, each says whether
     * this person may change it: its author or an admin (the notes service enforces the same).
     */
    async list(req: Request, referenceType: string, referenceId: string, { editable = false } = {}) {
      const user = currentUser(req);
      const rows = await notes.listFor(referenceType, referenceId);
      return rows.map((row) => ({
        ...presentNote(row),
        mayChange: editable && (row.created_by === user.id || user.role === 'admin'),
      }));
    },

    /** Adds the posted note and flashes so; a refused note comes back as the form to re-render. */
    async add(req: Request, referenceType: string, referenceId: string): Promise<ReturnedForm<'note'> | null> {
      const values = { text: textField(req.body.text) };
      const result = await attempt(() =>
        notes.create({
          ...parse(CreateNote, { ...values, referenceType, referenceId }),
          createdBy: currentUser(req).id,
        }),
      );
      if (!result.ok) return { form: 'note', ...result, values };
      flash(req, 'Note added');
      return null;
    },
  };
}
