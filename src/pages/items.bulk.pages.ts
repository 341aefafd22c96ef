import { Router, type Request, type Response } from 'express';
import type { Deps } from '../deps';
import { actorOf, type Actor } from '../modules/audit/audit.actor';
import { currentUser } from '../auth/guards';
import { BadRequest } from '../http/errors';
import { refuseDeepJson } from '../http/json-body';
import { parse } from '../http/validate';
import { itemsBulkService, type BulkOutcome } from '../modules/items/items.bulk';
import { sendItemsExport } from '../modules/items/items.export';
import { presentBulkOutcome } from '../modules/items/items.present';
import {
  BulkAddNote,
  BulkCategory,
  BulkExport,
  BulkIds,
  BulkImport,
  BulkVatRate,
} from '../modules/items/items.schemas';
import { attempt, flash, pageUpload, repeatedField, type FieldErrors } from './forms';
import { itemsListView } from './items.list';
import { requirePage, requirePageUnderProfile, safeNext } from './page-guards';
import { MANAGER_UNDER_STRICT } from '../auth/access-profile';

/** The API's body limit for an import (10 MB of JSON). */
const MAX_IMPORT_BYTES = 10 * 1024 * 1024;

/** The checked rows of the items table as ids (none checked is an empty list, which the schemas refuse). */
const itemIdsOf = (value: unknown): number[] => repeatedField(value).map(Number);

/** The list the bulk form was sent from (its filters and page), to go back to; only an /items address. */
function returnAddress(value: unknown): { href: string; query: Record<string, string> } {
  const href = safeNext(value);
  if (!/^\/items(\?|$)/.test(href)) return { href: '/items', query: {} };
  return { href, query: Object.fromEntries(new URL(href, 'http://localhost').searchParams) };
}

type BulkAction = (body: Record<string, unknown>, itemIds: number[], actor: Actor) => Promise<BulkOutcome>;

/** /items/bulk, /items/export and /items/import: the API's bulk services behind forms. */
export function itemsBulkPages({ db }: Deps): Router {
  const pages = Router();
  const bulk = itemsBulkService(db);
  const listView = itemsListView(db);

  // Each button of the bulk form names its action; the API's schema for it judges the form.
  const actions: Record<string, BulkAction> = {
    'set-inactive': async (_body, itemIds, actor) => bulk.setActive(parse(BulkIds, { itemIds }).itemIds, false, actor),
    'set-active': async (_body, itemIds, actor) => bulk.setActive(parse(BulkIds, { itemIds }).itemIds, true, actor),
    'set-stock-zero': async (_body, itemIds, actor) =>
      bulk.setStockZero(parse(BulkIds, { itemIds }).itemIds, actor.userId),
    delete: async (_body, itemIds, actor) => bulk.delete(parse(BulkIds, { itemIds }).itemIds, actor),
    'change-category': async (body, itemIds, actor) => {
      const input = parse(BulkCategory, { itemIds, categoryId: body.categoryId ? Number(body.categoryId) : undefined });
      return bulk.changeCategory(input.itemIds, input.categoryId, actor);
    },
    'change-vat-rate': async (body, itemIds, actor) => {
      const input = parse(BulkVatRate, { itemIds, vatRate: body.vatRate });
      return bulk.changeVatRate(input.itemIds, input.vatRate, actor);
    },
    'add-note': async (body, itemIds, actor) => {
      const input = parse(BulkAddNote, { itemIds, noteText: body.noteText });
      return bulk.addNote(input.itemIds, input.noteText, actor.userId);
    },
  };

  /** A refused bulk form: the list it came from again, with the message and what was chosen. */
  async function renderRefusal(
    req: Request,
    res: Response,
    query: Record<string, string>,
    refusal: { status: number; message: string; errors: FieldErrors },
  ) {
    const values = {
      categoryId: String(req.body.categoryId ?? ''),
      vatRate: String(req.body.vatRate ?? ''),
      noteText: String(req.body.noteText ?? ''),
    };
    // the schema's "itemIds must not be empty" is about the table's checkboxes, which the person knows as a selection
    const message = refusal.errors.itemIds ? 'Select at least one item in the table' : refusal.message;
    res
      .status(refusal.status)
      .render('items/index', await listView(req, query, { message, errors: refusal.errors, values }));
  }

  pages.post('/items/bulk', requirePage('manager'), async (req, res) => {
    const back = returnAddress(req.body.returnTo);
    const action = actions[String(req.body.action)];
    const result = await attempt(async () => {
      if (!action) throw BadRequest('Choose a bulk action');
      return action(req.body, itemIdsOf(req.body.itemIds), actorOf(req));
    }, [400, 404, 409, 422]);
    if (!result.ok) return renderRefusal(req, res, back.query, result);
    flash(req, presentBulkOutcome(result.value).message);
    res.redirect(303, back.href);
  });

  // The API's export: the checked items, or with none checked every item the list covers (inactive ones when it shows them).
  pages.post('/items/export', ...requirePageUnderProfile(db, MANAGER_UNDER_STRICT), async (req, res) => {
    const back = returnAddress(req.body.returnTo);
    const itemIds = itemIdsOf(req.body.itemIds);
    const body =
      itemIds.length > 0
        ? { itemIds, format: req.body.format }
        : { all: true, includeInactive: back.query.includeInactive === 'true', format: req.body.format };
    const result = await attempt(() => sendItemsExport(res, bulk, parse(BulkExport, body), currentUser(req)));
    if (!result.ok) await renderRefusal(req, res, back.query, result);
  });

  const importView = (overrides: Record<string, unknown> = {}) => ({
    title: 'Import items',
    stylesheets: ['/assets/css/items.css'],
    message: null,
    errors: {},
    result: null,
    ...overrides,
  });

  pages.get('/items/import', ...requirePageUnderProfile(db, MANAGER_UNDER_STRICT), (_req, res) => {
    res.render('items/import', importView());
  });

  // The result is shown at once rather than after a redirect: it is a report of this upload, one row per item of the file.
  pages.post(
    '/items/import',
    ...requirePageUnderProfile(db, MANAGER_UNDER_STRICT),
    ...pageUpload('file', MAX_IMPORT_BYTES),
    async (req, res) => {
      const result = await attempt(async () => {
        const { items } = parse(BulkImport, importBody(req.file?.buffer));
        const outcome = await bulk.import(items, currentUser(req).id);
        const failures = new Map(outcome.errors.map((e) => [e.position, e.message]));
        const rows = items.map((raw, index) => {
          const record = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
          return {
            position: index + 1,
            sku: String(record.sku ?? ''),
            name: String(record.name ?? ''),
            problem: failures.get(index + 1) ?? null,
          };
        });
        return { successful: outcome.successful, failed: outcome.errors.length, rows };
      });
      if (!result.ok)
        return res
          .status(result.status)
          .render('items/import', importView({ message: result.message, errors: result.errors }));
      res.render('items/import', importView({ result: result.value }));
    },
  );

  return pages;
}

/** The uploaded file as the API's import body: {"items": [...]}, or just the array of items. */
function importBody(file: Buffer | undefined): unknown {
  if (!file || file.length === 0) throw BadRequest('Choose a .json file to import');
  refuseDeepJson(file);
  let parsed: unknown;
  try {
    parsed = JSON.parse(file.toString('utf8'));
  } catch {
    throw BadRequest('The file is not valid JSON');
  }
  return Array.isArray(parsed) ? { items: parsed } : parsed;
}
