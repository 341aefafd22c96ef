import type { Db } from '../../db/knex';

/** The kinds of record a note can be attached to (notes.reference_type). */
export const NOTE_REFERENCE_TYPES = ['item', 'vendor', 'order', 'sale', 'charge_code'] as const;
export type NoteReferenceType = (typeof NOTE_REFERENCE_TYPES)[number];

/** Whether the record a note would name exists (its id as the note stores it, text). */
export type RecordExists = (db: Db, referenceId: string) => Promise<boolean>;

/*
 * Each kind's check belongs to the record's owner. The owners attach notes (they import this
 * module), so this module cannot import them back: the composition root (src/owners.ts) registers
 * the owners' checks once, when it builds the app, before any request.
 */
let recordChecks: Record<NoteReferenceType, RecordExists> | undefined;

/** The owners' existence checks, one per kind of record (src/owners.ts). */
export function registerNoteReferences(checks: Record<NoteReferenceType, RecordExists>): void {
  recordChecks = checks;
}

/** Whether the record of this kind exists, by its owner's check. */
export function noteRecordExists(type: NoteReferenceType, db: Db, referenceId: string): Promise<boolean> {
  if (!recordChecks) throw new Error('The notes reference checks are registered by buildApp (registerNoteReferences)');
  return recordChecks[type](db, referenceId);
}
