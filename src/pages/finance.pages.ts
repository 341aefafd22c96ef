import type { Request, Response, Router } from 'express';
import type { Deps } from '../deps';
import { parse } from '../http/validate';
import { actorOf } from '../modules/audit/audit.actor';
import { rechargeBatches } from '../modules/finance/finance.batches';
import {
  presentBatch,
  presentBatchClosed,
  presentBatchList,
  presentBatchPreview,
  presentRechargeReport,
} from '../modules/finance/finance.present';
import {
  BatchListQuery,
  BatchParams,
  CloseBatch,
  RechargeQuery,
  type RechargeFilter,
} from '../modules/finance/finance.schemas';
import { financeService } from '../modules/finance/finance.service';
import { attempt, filledIn, flash, textField, type FieldErrors } from './forms';
import { PageRouter } from './page-route';

const FILTER_FIELDS = ['from', 'to', 'costCentre', 'chargeCode'] as const;

/** The report's filter as query parameters (only the fields in use), for the API's export links. */
function filterParams(filter: RechargeFilter, format: 'csv' | 'xlsx'): URLSearchParams {
  const params = new URLSearchParams();
  for (const key of FILTER_FIELDS) if (filter[key]) params.set(key, filter[key]);
  params.set('format', format);
  return params;
}

/**
 * Recharges are closed month by month (a batch is numbered by its month), so the close form
 * starts at the last day of the previous UTC month: the latest month that is over.
 */
function lastDayOfLastMonth(now = new Date()): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0)).toISOString().slice(0, 10);
}

/** The close form coming back refused: what was typed and what the API said. */
type CloseRefusal = { status: number; message: string; errors: FieldErrors };

export function financePages({ db, reads }: Deps): Router {
  const pages = new PageRouter(db);
  const batches = rechargeBatches(db);
  const access = { permission: 'finance.export' } as const;

  /** One page of the batches, newest first, with links to the pages around it that keep the report's filter. */
  async function batchList(page: number, limit: number, values: Record<string, string>) {
    const list = presentBatchList(await batches.list(page, limit), page, limit);
    const kept = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ''));
    const href = (n: number) => `/finance?${new URLSearchParams({ ...kept, page: String(n), limit: String(limit) })}`;
    const { totalPages } = list.pagination;
    return {
      batches: list.batches,
      pagination: {
        page,
        totalPages,
        previous: page > 1 ? href(page - 1) : null,
        next: page < totalPages ? href(page + 1) : null,
      },
    };
  }

  async function rechargeReport(req: Request, { from, to, costCentre, chargeCode }: RechargeFilter) {
    const filter = { from, to, costCentre, chargeCode };
    return {
      // a read replica when one is healthy and has the caller's own writes (issue 44)
      report: presentRechargeReport(await financeService(reads.forReports(req)).report(filter)),
      // the API's own exports: the session cookie signs the download in
      csvHref: `/api/finance/recharges?${filterParams(filter, 'csv')}`,
      xlsxHref: `/api/finance/recharges?${filterParams(filter, 'xlsx')}`,
    };
  }

  pages.use('/finance', (_req, res, next) => {
    res.locals.stylesheets = ['/assets/css/finance.css'];
    next();
  });

  pages.get('/finance', { access }, async (req, res) => {
    const values = Object.fromEntries(FILTER_FIELDS.map((key) => [key, textField(req.query[key])]));
    // the report's filter and the batch list's page, each read with the API's own schema
    const [query, listQuery] = await Promise.all([
      attempt(() =>
        parse(RechargeQuery, filledIn(Object.fromEntries(FILTER_FIELDS.map((key) => [key, req.query[key]])))),
      ),
      attempt(() => parse(BatchListQuery, filledIn({ page: req.query.page, limit: req.query.limit }))),
    ]);
    const [list, report] = await Promise.all([
      listQuery.ok ? batchList(listQuery.value.page, listQuery.value.limit, values) : null,
      query.ok ? rechargeReport(req, query.value) : null,
    ]);
    const refused = [query, listQuery].filter((a) => !a.ok);
    res.status(refused[0]?.status ?? 200).render('finance/index', {
      title: 'Finance',
      values,
      closeTo: lastDayOfLastMonth(),
      // a part whose query was refused is left out: its error shows instead
      report: null,
      batches: null,
      ...list,
      ...report,
      errors: Object.assign({}, ...refused.map((a) => a.errors)) as FieldErrors,
      message: refused[0]?.message ?? null,
    });
  });

  /** The preview of a close up to `to`, or the form alone before a date is chosen; a refused close comes back here with its message. */
  async function renderPreview(
    res: Response,
    to: string,
    close: () => CloseBatch,
    refusal: CloseRefusal | null = null,
  ) {
    const view = {
      title: 'Close a recharge batch',
      to,
      preview: null as ReturnType<typeof presentBatchPreview> | null,
      errors: refusal?.errors ?? {},
      message: refusal?.message ?? null,
    };
    if (to === '') {
      res.status(refusal?.status ?? 200).render('finance/close', view);
      return;
    }
    const preview = await attempt(async () => presentBatchPreview(await batches.preview(close())));
    if (!preview.ok) {
      res.status(refusal?.status ?? preview.status).render('finance/close', {
        ...view,
        errors: { ...preview.errors, ...view.errors },
        message: view.message ?? preview.message,
      });
      return;
    }
    res.status(refusal?.status ?? 200).render('finance/close', { ...view, preview: preview.value });
  }

  // before /finance/batches/:batch, which would read "close" as a batch (and refuse it)
  pages.get(
    '/finance/batches/close',
    { access, query: CloseBatch, fromQuery: (query) => ({ to: textField(query.to).trim() }) },
    async (req, res) => {
      await renderPreview(res, textField(req.query.to).trim(), () => req.input.query);
    },
  );

  pages.post(
    '/finance/batches',
    { access, form: CloseBatch, fromForm: (body) => filledIn({ to: body.to }) },
    async (req, res) => {
      const result = await attempt(async () => batches.close(actorOf(req), req.input.form));
      if (!result.ok) return renderPreview(res, textField(req.body.to).trim(), () => req.input.form, result);
      flash(req, presentBatchClosed(result.value).message);
      res.redirect(303, `/finance/batches/${encodeURIComponent(result.value.batch.number)}`);
    },
  );

  pages.get('/finance/batches/:batch', { access, params: BatchParams }, async (req, res) => {
    const { batch: ref } = req.input.params;
    const batch = presentBatch(await batches.get(ref));
    res.render('finance/batch', {
      title: `Recharge batch ${batch.number}`,
      batch,
      // the API's journal CSV: the session cookie signs the download in
      journalHref: `/api/finance/recharge-batches/${encodeURIComponent(batch.number)}/journal`,
    });
  });

  return pages.router;
}
