import { z } from 'zod';
import '../../http/openapi';
import { IntId } from '../../http/validate';
import { UserRef } from '../users/users.schemas';
import { limitParam } from '../../http/pagination';

export const Note = z
  .object({
    id: z.number().int(),
    text: z.string(),
    kind: z.enum(['note', 'refund']).openapi({
      description:
        "refund: the note a refund wrote on its sale, part of the sale's record: nobody may edit or delete it (403)",
    }),
    referenceType: z.string().openapi({ description: 'item, sale, order, charge_code, vendor' }),
    referenceId: z.string(),
    createdBy: z.string().nullable().openapi({ description: "the author's user id" }),
    creator: UserRef.nullable().openapi({ description: 'the author as {id, email, firstName, lastName}' }),
    createdAt: z.string().datetime(),
    updatedAt: z.string().datetime(),
  })
  .openapi('Note');
export type Note = z.infer<typeof Note>;
export const NoteList = z.array(Note);
export const NoteCount = z.object({ count: z.number().int() });
export type NoteCount = z.infer<typeof NoteCount>;
export const NoteCounts = z.object({ counts: z.record(z.string(), z.number().int()) });
export type NoteCounts = z.infer<typeof NoteCounts>;

const ReferenceType = z.string({ error: 'is required' }).trim().min(1, { error: 'is required' }).max(50);
const ReferenceId = z
  .union([z.string(), z.number()], { error: 'is required' })
  .transform((v) => String(v).trim())
  .pipe(z.string().min(1, { error: 'is required' }).max(100));
const NoteText = z.string({ error: 'is required' }).trim().min(1, { error: 'is required' }).max(10_000);

export const NoteQuery = z.object({
  referenceType: ReferenceType.optional(),
  referenceId: z.string().trim().min(1).max(100).optional(),
  limit: limitParam(100, 500),
});
export const ReferenceParams = z.object({
  referenceType: ReferenceType,
  referenceId: z.string().trim().min(1).max(100),
});
export const CreateNote = z
  .object({ text: NoteText, referenceType: ReferenceType, referenceId: ReferenceId })
  .openapi('CreateNote');
export const UpdateNote = z.object({ text: NoteText }).openapi('UpdateNote');
export const NoteIdParams = z.object({ id: IntId });
export const BatchCounts = z
  .object({
    referenceType: ReferenceType,
    referenceIds: z
      .array(z.union([z.string(), z.number()]).transform((v) => String(v).trim()))
      .max(1000, { error: 'at most 1000 ids' }),
  })
  .openapi('NoteCountsRequest');
