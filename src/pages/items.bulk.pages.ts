import type { Request, Response, Router } from 'express';
import type { z } from 'zod';
import type { Deps } from '../deps';
import { actorOf, type Actor } from '../modules/audit/audit.actor';
import { currentUser } from '../auth/guards';
import { BadRequest } from '../http/errors';
import { refuseDeepJson } from '../http/json-body';
import { itemsBulkService, type BulkOutcome } from '../modules/items/items.bulk';
import { sendItemsExport } from '../modules/items/items.export';
import { presentBulkOutcome } from '../modules/items/items.present';
import {
  BulkAddNote,
  BulkCategory,
  BulkExport,
  BulkIds,
  BulkImport,
  ItemQuery,
  BulkVatRate,
} from '../modules/items/items.schemas';
import { attempt, flash, repeatedField, type FieldErrors } from './forms';
import { itemsListQuery, itemsListView } from './items.list';
import { safeNext } from './page-guards';
import { PageRouter, type Sent } from './page-route';
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

/** The list the form was sent from, shown again with a refusal: its query, read from the form's return address. */
const LIST_SENT_FROM = {
  query: ItemQuery,
  fromQuery: (_query: Sent, req: Request) => itemsListQuery(returnAddress(req.body.returnTo).query),
};

/** A bulk action: the API's schema that judges its form, and what it does with what passed. */
type BulkAction = { schema: z.ZodType; run: (input: unknown, actor: Actor) => Promise<BulkOutcome> };

const bulkAction = <S extends z.ZodType>(
  schema: S,
  run: (input: z.output<S>, actor: Actor) => Promise<BulkOutcome>,
): BulkAction => ({
  schema,
  // the form was parsed with this action's own schema (its declaration picks it by the button)
  run: (input, actor) => run(input as z.output<S>, actor),
});

/** The bulk form's fields as the API's bodies read them: each action's schema takes its own. */
const bulkBody = (body: Record<string, unknown>) => ({
  itemIds: itemIdsOf(body.itemIds),
  categoryId: body.categoryId ? Number(body.categoryId) : undefined,
  vatRate: body.vatRate,
  noteText: body.noteText,
});

/** /items/bulk, /items/export and /items/import: the API's bulk services behind forms. */
export function itemsBulkPages({ db }: Deps): Router {
  const pages = new PageRouter(db);
  const bulk = itemsBulkService(db);
  const listView = itemsListView(db);

  // Each button of the bulk form names its action; the API's schema for it judges the form.
  const actions: Record<string, BulkAction> = {
    'set-inactive': bulkAction(BulkIds, (input, actor) => bulk.setActive(input.itemIds, false, actor)),
    'set-active': bulkAction(BulkIds, (input, actor) => bulk.setActive(input.itemIds, true, actor)),
    'set-stock-zero': bulkAction(BulkIds, (input, actor) => bulk.setStockZero(input.itemIds, actor.userId)),
    delete: bulkAction(BulkIds, (input, actor) => bulk.delete(input.itemIds, actor)),
    'change-category': bulkAction(BulkCategory, (input, actor) =>
      bulk.changeCategory(input.itemIds, input.categoryId, actor),
    ),
    'change-vat-rate': bulkAction(BulkVatRate, (input, actor) =>
      bulk.changeVatRate(input.itemIds, input.vatRate, actor),
    ),
    'add-note': bulkAction(BulkAddNote, (input, actor) => bulk.addNote(input.itemIds, input.noteText, actor.userId)),
  };
  const actionOf = (body: Record<string, unknown>): BulkAction | undefined =>
    Object.hasOwn(actions, String(body.action)) ? actions[String(body.action)] : undefined;

  /** A refused bulk form: the list it came from again, with the message and what was chosen. */
  async function renderRefusal(
    req: Request,
    res: Response,
    query: ItemQuery,
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

  pages.post(
    '/items/bulk',
    {
      access: 'manager',
      ...LIST_SENT_FROM,
      // an unknown action is refused before its form is read
      form: (body) => actionOf(body)?.schema ?? BulkIds,
      fromForm: bulkBody,
    },
    async (req, res) => {
      const back = returnAddress(req.body.returnTo);
      const action = actionOf(req.body);
      const result = await attempt(async () => {
        if (!action) throw BadRequest('Choose a bulk action');
        return action.run(req.input.form, actorOf(req));
      }, [400, 404, 409, 422]);
      if (!result.ok) return renderRefusal(req, res, req.input.query, result);
      flash(req, presentBulkOutcome(result.value).message);
      res.redirect(303, back.href);
    },
  );

  // The API's export: the checked items, or with none checked every item the list covers (inactive ones when it shows them).
  pages.post(
    '/items/export',
    {
      access: MANAGER_UNDER_STRICT,
      ...LIST_SENT_FROM,
      form: BulkExport,
      fromForm: (body) => {
        const itemIds = itemIdsOf(body.itemIds);
        return itemIds.length > 0
          ? { itemIds, format: body.format }
          : {
              all: true,
              includeInactive: returnAddress(body.returnTo).query.includeInactive === 'true',
              format: body.format,
            };
      },
    },
    async (req, res) => {
      const result = await attempt(() => sendItemsExport(res, bulk, req.input.form, currentUser(req)));
      if (!result.ok) await renderRefusal(req, res, req.input.query, result);
    },
  );

  const importView = (overrides: Record<string, unknown> = {}) => ({
    title: 'Import items',
    stylesheets: ['/assets/css/items.css'],
    message: null,
    errors: {},
    result: null,
    ...overrides,
  });

  pages.get('/items/import', { access: MANAGER_UNDER_STRICT }, (_req, res) => {
    res.render('items/import', importView());
  });

  // The result is shown at once rather than after a redirect: it is a report of this upload, one row per item of the file.
  pages.post(
    '/items/import',
    {
      access: MANAGER_UNDER_STRICT,
      upload: { field: 'file', maxBytes: MAX_IMPORT_BYTES },
      form: BulkImport,
      fromForm: (_body, req) => importBody(req.file?.buffer),
    },
    async (req, res) => {
      const result = await attempt(async () => {
        const { items } = req.input.form;
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

  return pages.router;
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
