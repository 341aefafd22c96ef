import type { Request } from 'express';
import type { Deps } from '../../deps';
import { currentUser } from '../../auth/guards';
import { ApiRouter } from '../../http/api-router';
import { BadRequestBody, CsvText, MessageBody, ValidationErrorBody } from '../../http/openapi';
import { sendCsvDownload } from '../../http/send-file';
import { actorOf } from '../audit/audit.actor';
import {
  FULL_VIEW,
  REPORT_CSV_COLUMNS,
  presentChangeResult,
  presentCountList,
  presentCountResult,
  presentPostResult,
  presentStocktake,
  presentStocktakePage,
  presentStocktakeSummary,
  presentSuggestions,
  presentUndoResult,
  reportCsvRecord,
  type Visibility,
} from './stocktakes.present';
import {
  ChangeCountBody,
  ChangeCountResult,
  CountBody,
  CountList,
  CountResult,
  CountsQuery,
  CreateStocktake,
  PostResult,
  PostStocktake,
  ReportQuery,
  Stocktake,
  StocktakeCountParams,
  StocktakeListQuery,
  StocktakePage,
  StocktakeParams,
  StocktakeSummary,
  SuggestionList,
  SuggestionsQuery,
  UndoResult,
} from './stocktakes.schemas';
import { scanRightsOf, seesExpected, STOCKTAKE_MANAGERS, stocktakesService } from './stocktakes.service';

const failure = (description: string) => ({ description, schema: MessageBody });
const notFound = failure('Stocktake not found');
const invalid = { description: 'Validation failed', schema: ValidationErrorBody };

/** What the caller may see of this stocktake: a blind one hides expected figures from callers below manager. */
const visibilityFor = (req: Request, blind: boolean): Visibility =>
  seesExpected(currentUser(req), blind) ? FULL_VIEW : { expected: false };

/**
 * /api/stocktakes (issue 31): create (manager), list, read, count (anyone signed in), undo a
 * count, post and cancel (manager), the auditors' report, and the cycle-count suggestions.
 */
export function stocktakesRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Stocktakes');
  const stocktakes = stocktakesService(db);

  api.get(
    '/stocktakes',
    {
      operationId: 'listStocktakes',
      summary: 'List stocktakes, newest first',
      description: 'Paged (page, limit: default 20, max 100); optional status filter. Lines are not included.',
      access: 'auth',
      query: StocktakeListQuery,
      responses: { 200: { description: 'A page of stocktakes', schema: StocktakePage }, 400: invalid },
    },
    async (req, res) => {
      const query = req.input.query;
      const { rows, total } = await stocktakes.list(query);
      res.json(presentStocktakePage(rows, query.page, query.limit, total));
    },
  );

  api.post(
    '/stocktakes',
    {
      operationId: 'createStocktake',
      summary: 'Start a stocktake',
      description:
        'scope is {all: true} (every active item), {categoryIds} (their active items) or {itemIds} (those items). One line ' +
        'per item, uncounted (expected is taken when a line is first counted). reference is ST-<YYYYMMDD>-<n>, never issued ' +
        'twice. blind: callers below manager never receive expected, variance or varianceValue. Unknown ids: 400 naming them.',
      access: STOCKTAKE_MANAGERS,
      body: CreateStocktake,
      responses: {
        201: { description: 'The open stocktake', schema: Stocktake },
        400: failure('Validation failed, unknown category or item ids, or no active items in the scope'),
      },
    },
    async (req, res) => {
      res.status(201).json(presentStocktake(await stocktakes.create(req.input.body, actorOf(req)), FULL_VIEW));
    },
  );

  api.get(
    '/stocktakes/suggestions',
    {
      operationId: 'getStocktakeSuggestions',
      summary: 'The cycle-count list: items due for a count',
      description:
        'Active items not counted by a posted stocktake for `days` days (default 90; never counted: due), highest stock ' +
        'value (price x current stock) first.',
      access: 'auth',
      query: SuggestionsQuery,
      responses: { 200: { description: 'Items due for a count', schema: SuggestionList }, 400: invalid },
    },
    async (req, res) => {
      const { days, limit } = req.input.query;
      res.json(presentSuggestions(days, await stocktakes.suggestions({ days, limit })));
    },
  );

  api.get(
    '/stocktakes/:id',
    {
      operationId: 'getStocktake',
      summary: 'A stocktake with its lines and totals',
      description:
        'Lines by item name: expected (stock when first counted), counted, variance = counted - expected, varianceValue = ' +
        "variance x unitPrice (the item's price; fixed when posted). A blind stocktake read by a caller below manager has " +
        'expected, variance, unitPrice, varianceValue, itemsWithVariance and the totals varianceValue null.',
      access: 'auth',
      params: StocktakeParams,
      responses: { 200: { description: 'The stocktake', schema: Stocktake }, 400: invalid, 404: notFound },
    },
    async (req, res) => {
      const found = await stocktakes.get(req.input.params.id);
      res.json(presentStocktake(found, visibilityFor(req, found.stocktake.blind)));
    },
  );

  api.get(
    '/stocktakes/:id/report',
    {
      operationId: 'getStocktakeReport',
      summary: "The stocktake's report for the auditors",
      description:
        'format=json (default): the stocktake as GET /api/stocktakes/{id}; format=csv: a download, one row per line with ' +
        'reference, SKU, name, found, expected, counted, variance, unit price, variance value, counted by and at. The blind ' +
        'rule applies: a caller below manager gets those figures empty.',
      access: 'auth',
      params: StocktakeParams,
      query: ReportQuery,
      responses: {
        200: { description: 'The report', schema: Stocktake, otherContent: { 'text/csv': CsvText } },
        400: invalid,
        404: notFound,
      },
    },
    async (req, res) => {
      const found = await stocktakes.get(req.input.params.id);
      const view = visibilityFor(req, found.stocktake.blind);
      if (req.input.query.format === 'json') return res.json(presentStocktake(found, view));
      const reference = found.stocktake.reference;
      async function* records() {
        for (const line of found.lines) yield reportCsvRecord(reference, line, view);
      }
      await sendCsvDownload(res, {
        name: `stocktake-${reference}.csv`,
        columns: REPORT_CSV_COLUMNS,
        records: records(),
      });
    },
  );

  api.get(
    '/stocktakes/:id/counts',
    {
      operationId: 'listStocktakeCounts',
      summary: "A stocktake's last scans",
      description: 'Newest first, at most limit (default 20, max 500); undone scans too, with undoneAt.',
      access: 'auth',
      params: StocktakeParams,
      query: CountsQuery,
      responses: { 200: { description: 'Scans', schema: CountList }, 400: invalid, 404: notFound },
    },
    async (req, res) => {
      res.json(presentCountList(await stocktakes.counts(req.input.params.id, { limit: req.input.query.limit })));
    },
  );

  api.post(
    '/stocktakes/:id/counts',
    {
      operationId: 'countStocktakeItem',
      summary: 'Count an item (a scan)',
      description:
        "code (the item's SKU or a barcode, as GET /api/items/lookup finds it) or itemId, and quantity (>= 0). mode add " +
        '(default) adds to the line, so counts from two shelves or two people sum; set replaces it. The first count of a ' +
        "line takes the item's current stock as its expected. An item outside the scope is added as a found line. Answers " +
        'the line and the scan recorded (count.id undoes it). 409 on a posted or cancelled stocktake. A lot-tracked item ' +
        'is counted per lot: a GS1 scan carrying (01) and (10) counts that lot, otherwise lotNumber is required (400 ' +
        '"Lot number is required for <SKU>"); the lot\'s line takes the lot\'s quantity as its expected, and a lot the item ' +
        "does not have yet (expected 0) is created when the stocktake is posted, with the scan's expiry or expiresOn. " +
        "409 also when the scan's expiry is not its lot's.",
      access: 'auth',
      params: StocktakeParams,
      body: CountBody,
      responses: {
        200: { description: 'The line after the count', schema: CountResult },
        400: {
          description:
            'Validation failed, "Lot number is required for <SKU>" (a lot-tracked item without its lot), or a lotNumber for an item not tracked by lot',
          schema: BadRequestBody,
        },
        404: failure("Stocktake not found, Item not found, or No item with barcode '<code>'"),
        409: failure("The stocktake is posted or cancelled, or the scan's expiry is not its lot's"),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const result = await stocktakes.count(id, req.input.body, actorOf(req));
      res.json(presentCountResult(result, visibilityFor(req, result.blind)));
    },
  );

  api.delete(
    '/stocktakes/:id/counts/:countId',
    {
      operationId: 'undoStocktakeCount',
      summary: 'Undo a scan',
      description:
        "The line's count goes back by what that scan changed (an add's quantity; a set's new minus previous count); later " +
        'scans stay. A line left without scans is uncounted again (a found line is removed: line null). 409 when already ' +
        'undone, on a posted or cancelled stocktake, or when the count would fall below zero. Only the person who ' +
        'scanned it or a manager may undo a scan (403).',
      access: 'auth',
      params: StocktakeCountParams,
      responses: {
        200: { description: 'The scan undone and its line now', schema: UndoResult },
        400: invalid,
        403: failure('Not your scan, and you are not a manager'),
        404: failure('Stocktake not found or Count not found'),
        409: failure('Already undone, the stocktake is closed, or the count would fall below zero'),
      },
    },
    async (req, res) => {
      const { id, countId } = req.input.params;
      const result = await stocktakes.undoCount(id, countId, actorOf(req), scanRightsOf(currentUser(req)));
      res.json(presentUndoResult(result, visibilityFor(req, result.blind)));
    },
  );

  api.patch(
    '/stocktakes/:id/counts/:countId',
    {
      operationId: 'changeStocktakeCount',
      summary: 'Change the quantity of a scan',
      description:
        'A box of 24 scanned once: in one transaction the scan is undone and a new add of quantity of its item recorded ' +
        '(quantity 0 only undoes it; the same quantity changes nothing: count is the scan itself). Only an add scan, by ' +
        'the person who scanned it or a manager (403). Answers the line now and the new scan (count null for 0; line ' +
        'null when a found line lost its last scan). 409 as an undo: already undone, the stocktake is closed, the count ' +
        'would fall below zero; also for a set (recount the line instead).',
      access: 'auth',
      params: StocktakeCountParams,
      body: ChangeCountBody,
      responses: {
        200: { description: 'The line and the new scan', schema: ChangeCountResult },
        400: invalid,
        403: failure('Not your scan, and you are not a manager'),
        404: failure('Stocktake not found or Count not found'),
        409: failure('Already undone, a set, the stocktake is closed, or the count would fall below zero'),
      },
    },
    async (req, res) => {
      const { id, countId } = req.input.params;
      const { quantity } = req.input.body;
      const result = await stocktakes.changeCount(
        id,
        { countId, quantity },
        actorOf(req),
        scanRightsOf(currentUser(req)),
      );
      res.json(presentChangeResult(result, visibilityFor(req, result.blind)));
    },
  );

  api.post(
    '/stocktakes/:id/post',
    {
      operationId: 'postStocktake',
      summary: 'Post a stocktake to stock',
      description:
        "One transaction: each counted line's variance (counted - expected) is applied to the item's current stock as one " +
        'adjustment movement (reason "Stocktake <reference>"), so a sale made between the count and the posting is kept. ' +
        'uncounted: ignore (default) leaves uncounted lines alone; zero counts them as 0 against the stock at posting. Sets ' +
        "the counted items' lastCountedAt. 409 when already posted or cancelled (nothing is written), or when a line would " +
        'leave stock below zero (more sold since its count than counted: recount it). A lot-tracked item: each lot line ' +
        "adjusts its lot by its own variance from the lot's level at posting (a sale's lots since the count stay), through " +
        'the ledger; zero also empties the lots holding stock that nobody counted. Audited.',
      access: STOCKTAKE_MANAGERS,
      params: StocktakeParams,
      body: PostStocktake,
      omittedBodyIsEmpty: true,
      responses: {
        200: { description: 'Posted', schema: PostResult },
        400: invalid,
        404: notFound,
        409: failure('Already posted, cancelled, or a line would leave stock below zero'),
      },
    },
    async (req, res) => {
      res.json(presentPostResult(await stocktakes.post(req.input.params.id, req.input.body, actorOf(req))));
    },
  );

  api.delete(
    '/stocktakes/:id',
    {
      operationId: 'cancelStocktake',
      summary: 'Cancel an open stocktake',
      description: 'Nothing changes stock. 409 once posted, or when already cancelled. Audited.',
      access: STOCKTAKE_MANAGERS,
      params: StocktakeParams,
      responses: {
        200: { description: 'The cancelled stocktake (without its lines)', schema: StocktakeSummary },
        400: invalid,
        404: notFound,
        409: failure('Posted or already cancelled'),
      },
    },
    async (req, res) => {
      res.json(presentStocktakeSummary(await stocktakes.cancel(req.input.params.id, actorOf(req))));
    },
  );

  return api.router;
}
