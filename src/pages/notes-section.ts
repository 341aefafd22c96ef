import type { Request } from 'express';
import type { z } from 'zod';
import { currentUser } from '../auth/guards';
import type { Db } from '../db/knex';
import { presentNote } from '../modules/notes/notes.present';
import { CreateNote } from '../modules/notes/notes.schemas';
import { mayChangeNote, notesService } from '../modules/notes/notes.service';
import { attempt, flash, textField, type ReturnedForm } from './forms';
import type { PageRequest, Sent } from './page-route';

/** The record a note is added to: its type and id, from the page's path. */
type NoteReference = { referenceType: string; referenceId: string };

/** The add-note form, in the declaration of each record page's notes route: the text typed, on the page's record. */
export const NOTE_FORM = {
  form: CreateNote,
  fromForm: (body: Sent, _req: Request, reference: NoteReference) => ({ text: textField(body.text), ...reference }),
};

type NoteFormRequest = PageRequest<{ formWith(reference: NoteReference): z.output<typeof CreateNote> }>;

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
        mayChange: editable && mayChangeNote(row, user),
      }));
    },

    /** Adds the posted note and flashes so; a refused note comes back as the form to re-render. */
    async add(req: NoteFormRequest, referenceType: string, referenceId: string): Promise<ReturnedForm<'note'> | null> {
      const values = { text: textField(req.body.text) };
      const result = await attempt(() =>
        notes.create({ ...req.input.formWith({ referenceType, referenceId }), createdBy: currentUser(req).id }),
      );
      if (!result.ok) return { form: 'note', ...result, values };
      flash(req, 'Note added');
      return null;
    },
  };
}
