import type { Deps } from '../../deps';
import { currentUser } from '../../auth/guards';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { presentNote, presentNoteCount, presentNoteCounts } from './notes.present';
import {
  BatchCounts,
  CreateNote,
  Note,
  NoteCount,
  NoteCounts,
  NoteIdParams,
  NoteList,
  NoteQuery,
  ReferenceParams,
  UpdateNote,
} from './notes.schemas';
import { notesService } from './notes.service';

const failure = (description: string) => ({ description, schema: MessageBody });

export function notesRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Notes');
  const notes = notesService(db);
  const invalid = { description: 'Validation failed or unknown referenceType', schema: ValidationErrorBody };
  const notFound = { description: 'Not found', schema: MessageBody };
  const typesNote = 'referenceType is one of item, sale, order, charge_code, vendor (unknown -> 400).';

  api.get(
    '/notes',
    {
      operationId: 'listNotes',
      summary: 'Notes, newest first',
      description: `Optionally filtered by referenceType and referenceId. ${typesNote} limit default 100, max 500.`,
      access: 'auth',
      query: NoteQuery,
      responses: { 200: { description: 'Notes', schema: NoteList }, 400: invalid },
    },
    async (req, res) => {
      const query = req.input.query;
      res.json((await notes.list(query)).map(presentNote));
    },
  );

  api.get(
    '/notes/count/:referenceType/:referenceId',
    {
      operationId: 'countNotes',
      summary: 'How many notes a record has',
      description: typesNote,
      access: 'auth',
      params: ReferenceParams,
      responses: { 200: { description: 'Count', schema: NoteCount }, 400: invalid },
    },
    async (req, res) => {
      const { referenceType, referenceId } = req.input.params;
      res.json(presentNoteCount(await notes.count(referenceType, referenceId)));
    },
  );

  api.post(
    '/notes/counts/batch',
    {
      operationId: 'countNotesInBatch',
      summary: 'Note counts for many records of one type',
      description: `${typesNote} Up to 1000 referenceIds; every id asked for appears in counts (0 when it has none).`,
      access: 'auth',
      body: BatchCounts,
      responses: { 200: { description: 'Counts by referenceId', schema: NoteCounts }, 400: invalid },
    },
    async (req, res) => {
      const { referenceType, referenceIds } = req.input.body;
      res.json(presentNoteCounts(await notes.countMany(referenceType, referenceIds)));
    },
  );

  api.get(
    '/notes/:referenceType/:referenceId',
    {
      operationId: 'listNotesOf',
      summary: "A record's notes, newest first",
      description: `${typesNote} 404 when the record does not exist.`,
      access: 'auth',
      params: ReferenceParams,
      responses: { 200: { description: 'Notes', schema: NoteList }, 400: invalid, 404: notFound },
    },
    async (req, res) => {
      const { referenceType, referenceId } = req.input.params;
      res.json((await notes.listFor(referenceType, referenceId)).map(presentNote));
    },
  );

  api.post(
    '/notes',
    {
      operationId: 'createNote',
      summary: 'Add a note to a record',
      description: `${typesNote} 404 when the record does not exist.`,
      access: 'auth',
      body: CreateNote,
      responses: { 201: { description: 'Created', schema: Note }, 400: invalid, 404: notFound },
    },
    async (req, res) => {
      const body = req.input.body;
      const row = await notes.create({ ...body, createdBy: currentUser(req).id });
      res.status(201).json(presentNote(row));
    },
  );

  api.put(
    '/notes/:id',
    {
      operationId: 'updateNote',
      summary: 'Edit a note',
      description: 'Only its author or an admin (403 otherwise). Answers 200 with the note.',
      access: 'auth',
      params: NoteIdParams,
      body: UpdateNote,
      responses: {
        200: { description: 'Updated', schema: Note },
        400: invalid,
        403: failure('Not the author'),
        404: notFound,
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const { text } = req.input.body;
      res.json(presentNote(await notes.update(id, text, currentUser(req))));
    },
  );

  api.delete(
    '/notes/:id',
    {
      operationId: 'deleteNote',
      summary: 'Delete a note',
      description: 'Only its author or an admin (403 otherwise).',
      access: 'auth',
      params: NoteIdParams,
      responses: { 204: 'Deleted', 403: failure('Not the author'), 404: notFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      await notes.remove(id, currentUser(req));
      res.status(204).end();
    },
  );

  return api.router;
}
