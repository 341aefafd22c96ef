import { presentJoinedUserRef } from '../users/users.present';
import type { Note, NoteCount, NoteCounts } from './notes.schemas';
import type { NoteReadRow } from './notes.service';

export function presentNote(row: NoteReadRow): Note {
  return {
    id: row.id,
    text: row.text,
    kind: row.kind,
    referenceType: row.reference_type,
    referenceId: row.reference_id,
    createdBy: row.created_by,
    creator: presentJoinedUserRef(row.created_by, {
      email: row.creator_email,
      firstName: row.creator_first_name,
      lastName: row.creator_last_name,
    }),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export const presentNoteCount = (count: number): NoteCount => ({ count });

export const presentNoteCounts = (counts: Record<string, number>): NoteCounts => ({ counts });
