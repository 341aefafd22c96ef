import type { Response, Router } from 'express';
import { z } from 'zod';
import type { Deps } from '../deps';
import { NotFound } from '../http/errors';
import { IdParams } from '../http/validate';
import { actorOf } from '../modules/audit/audit.actor';
import { presentArchive, presentArchiveList, presentPreview, presentPurge } from '../modules/archives/archives.present';
import {
  CreateArchive,
  KEEP_REASONS,
  PreviewQuery,
  RECORD_TYPES,
  type Archive,
  type ArchivePreview,
} from '../modules/archives/archives.schemas';
import { archivesService, isPurgeable } from '../modules/archives/archives.service';
import { attempt, flash, repeatedField, type FieldErrors } from './forms';
import { PageRouter } from './page-route';

const RECORD_TYPE_LABELS: Record<(typeof RECORD_TYPES)[number], string> = {
  sales: 'Sales',
  orders: 'Orders',
  stock_movements: 'Stock movements',
};
const NOUNS: Record<(typeof RECORD_TYPES)[number], [string, string]> = {
  sales: ['sale', 'sales'],
  orders: ['order', 'orders'],
  stock_movements: ['stock movement', 'stock movements'],
};

/** What an archive holds, in words: "1 sale, 3 stock movements". */
const recordsSummary = (archive: Archive) =>
  archive.recordTypes
    .map((type) => `${archive.recordsArchived[type]} ${NOUNS[type][archive.recordsArchived[type] === 1 ? 0 : 1]}`)
    .join(', ');

/** The create form sends the age as typed text: read as the preview's query reads it, the rest as the API's body. */
const CreateArchiveForm = CreateArchive.extend({ ageThresholdDays: PreviewQuery.shape.ageThresholdDays });

/** A purge deletes records from the database: the form has the admin tick that they mean it. */
const PurgeConfirmation = z.object({
  confirmPurge: z.literal('yes', { error: 'must be ticked to delete the archived records' }),
});

/** The create form as typed: the age as text, the record types ticked. */
const typedArchive = (body: Record<string, unknown>) => ({
  ageThresholdDays: String(body.ageThresholdDays ?? ''),
  includeRecordTypes: repeatedField(body.includeRecordTypes),
});

type Preview = { age: string; errors: FieldErrors; result: ArchivePreview | null };
type CreateForm = {
  message: string | null;
  errors: FieldErrors;
  values: { ageThresholdDays: string; includeRecordTypes: string[] };
};

/** /archives (admin, as the API): preview by age, create, download, and purge with a confirmation. */
export function archivesPages({ db, config }: Deps): Router {
  const pages = new PageRouter(db);
  const archives = archivesService(db, config.dataDir);

  async function archiveOf(id: number) {
    const row = (await archives.list()).find((archive) => archive.id === id);
    if (!row) throw NotFound('Archive not found');
    return presentArchive(row, config.dataDir);
  }

  /** The list, the preview (when asked for) and the create form (as typed when it came back). */
  async function renderIndex(res: Response, view: { status?: number; preview?: Preview; create?: CreateForm }) {
    const list = presentArchiveList(await archives.list(), config.dataDir).archives;
    const create = view.create ?? {
      message: null,
      errors: {},
      values: { ageThresholdDays: view.preview?.age || '365', includeRecordTypes: [...RECORD_TYPES] },
    };
    res.status(view.status ?? 200).render('operations/archives', {
      title: 'Archives',
      archives: list,
      isPurgeable,
      recordTypes: RECORD_TYPES,
      recordTypeLabels: RECORD_TYPE_LABELS,
      recordsSummary,
      preview: view.preview ?? { age: '', errors: {}, result: null },
      create,
    });
  }

  pages.get(
    '/archives',
    {
      access: 'admin',
      query: PreviewQuery,
      fromQuery: (query) => ({ ageThresholdDays: String(query.ageThresholdDays) }),
    },
    async (req, res) => {
      if (req.query.ageThresholdDays === undefined) return renderIndex(res, {});
      const age = String(req.query.ageThresholdDays);
      const preview = await attempt(async () =>
        presentPreview(await archives.preview(req.input.query.ageThresholdDays)),
      );
      if (!preview.ok)
        return renderIndex(res, { status: preview.status, preview: { age, errors: preview.errors, result: null } });
      await renderIndex(res, { preview: { age, errors: {}, result: preview.value } });
    },
  );

  pages.post('/archives', { access: 'admin', form: CreateArchiveForm, fromForm: typedArchive }, async (req, res) => {
    const values = typedArchive(req.body);
    const result = await attempt(async () => archives.create(req.input.form, actorOf(req)));
    if (!result.ok) return renderIndex(res, { status: result.status, create: { ...result, values } });
    const archive = presentArchive(result.value, config.dataDir);
    flash(req, `Archive ${archive.id} written: ${archive.archiveName}`);
    res.redirect(303, '/archives');
  });

  const renderPurge = async (
    res: Response,
    id: number,
    form = { status: 200, message: null as string | null, errors: {} as FieldErrors },
  ) => {
    const archive = await archiveOf(id);
    res
      .status(form.status)
      .render('operations/archive-purge', { title: `Purge archive ${archive.id}`, archive, recordsSummary, ...form });
  };

  pages.get('/archives/:id/purge', { access: 'admin', params: IdParams }, async (req, res) => {
    await renderPurge(res, req.input.params.id);
  });

  pages.post(
    '/archives/:id/purge',
    { access: 'admin', params: IdParams, form: PurgeConfirmation },
    async (req, res) => {
      const { id } = req.input.params;
      // the service's 400 (already purged, file missing or altered) comes back on the confirmation page
      const result = await attempt(async () => {
        // the form is only the confirmation: reading it refuses an unticked one beside its field
        void req.input.form;
        return archives.purge(id, actorOf(req));
      });
      if (!result.ok) return renderPurge(res, id, result);
      // the outcome (what was deleted, what was kept and why) is shown once, as the API answers it
      res.render('operations/archive-purged', {
        title: `Archive ${id} purged`,
        result: presentPurge(result.value, config.dataDir),
        keepReasons: KEEP_REASONS,
        recordTypeLabels: RECORD_TYPE_LABELS,
      });
    },
  );

  return pages.router;
}
