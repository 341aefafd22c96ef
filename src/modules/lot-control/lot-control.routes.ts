import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { CsvText, MessageBody, ValidationErrorBody } from '../../http/openapi';
import { sendCsvDownload } from '../../http/send-file';
import { actorOf } from '../audit/audit.actor';
import {
  LOT_TRACE_CSV_COLUMNS,
  lotTraceCsvRecords,
  presentListedLot,
  presentLotsPage,
  presentLotTrace,
} from './lot-control.present';
import {
  ListedLot,
  LotIdParams,
  LotsPage,
  LotsQuery,
  LotTrace,
  QuarantineBody,
  RecallBody,
  RecallResult,
  TraceQuery,
  WriteOffBody,
} from './lot-control.schemas';
import { LOT_MANAGERS, lotControlService } from './lot-control.service';

const notFound = { description: 'Lot not found', schema: MessageBody };
const invalid = { description: 'Validation failed', schema: ValidationErrorBody };

/** Issue 42 on the floor: the lots that need a manager, and what a manager does with one (write off, quarantine, release, trace, recall). */
export function lotControlRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Lots');
  const lots = lotControlService(db);

  api.get(
    '/lots',
    {
      operationId: 'listLots',
      summary: 'Lots holding stock that are expiring, expired or quarantined, soonest expiry first',
      description:
        "status on today's date (UK): expiring within the setting lots.expiryWarningDays (unset 30) of its date and not " +
        'quarantined, expired past it and not quarantined, quarantined whatever its date; unset, all three. Lots without ' +
        'expiry last, then by id. Each lot carries its item {id, sku, name}. limit defaults to 50, max 100.',
      access: 'auth',
      query: LotsQuery,
      responses: { 200: { description: 'A page of lots', schema: LotsPage }, 400: invalid },
    },
    async (req, res) => {
      const query = req.input.query;
      res.json(presentLotsPage(await lots.list(query), query.page, query.limit));
    },
  );

  api.post(
    '/lots/:id/write-off',
    {
      operationId: 'writeOffLot',
      summary: 'Write a lot off: one adjustment movement empties it',
      description:
        'The movement\'s reason is "Expired lot <lotNumber>", or the reason given. Audited. Answers the lot, now empty.',
      access: LOT_MANAGERS,
      params: LotIdParams,
      body: WriteOffBody,
      responses: {
        200: { description: 'The lot, emptied', schema: ListedLot },
        400: invalid,
        404: notFound,
        409: { description: 'The lot holds no stock', schema: MessageBody },
      },
    },
    async (req, res) => {
      res.json(presentListedLot(await lots.writeOff(req.input.params.id, req.input.body, actorOf(req))));
    },
  );

  api.post(
    '/lots/:id/quarantine',
    {
      operationId: 'quarantineLot',
      summary: 'Quarantine a lot: no sale takes it until it is released',
      description:
        'Naming a quarantined lot in a sale is 409 "Lot <lotNumber> of <SKU> is quarantined"; first-expiry-first-out passes it by. Audited.',
      access: LOT_MANAGERS,
      params: LotIdParams,
      body: QuarantineBody,
      responses: {
        200: { description: 'The lot, quarantined', schema: ListedLot },
        400: invalid,
        404: notFound,
        409: { description: 'The lot is quarantined already', schema: MessageBody },
      },
    },
    async (req, res) => {
      res.json(presentListedLot(await lots.quarantine(req.input.params.id, req.input.body, actorOf(req))));
    },
  );

  api.post(
    '/lots/:id/release',
    {
      operationId: 'releaseLot',
      summary: 'Release a quarantined lot: sales take it again (unless it is expired)',
      description: 'Audited.',
      access: LOT_MANAGERS,
      params: LotIdParams,
      responses: {
        200: { description: 'The lot, released', schema: ListedLot },
        404: notFound,
        409: { description: 'The lot is not quarantined', schema: MessageBody },
      },
    },
    async (req, res) => {
      res.json(presentListedLot(await lots.release(req.input.params.id, actorOf(req))));
    },
  );

  api.get(
    '/lots/:id/trace',
    {
      operationId: 'traceLot',
      summary: 'Who got a lot: its receipts, the sales that took it, its movements',
      description:
        "received: the orders it came in on (orderNumber, the order's numeric orderId, supplier name), net quantity; sales: each sale " +
        'that took some of it, net of refunds, with its charge code and recipient; movements: every stock movement of the lot, ' +
        "oldest first, quantity the movement's signed change to this lot; remaining: what it holds now. format=csv downloads the " +
        'sales, a row each.',
      access: LOT_MANAGERS,
      params: LotIdParams,
      query: TraceQuery,
      responses: {
        200: {
          description: 'The trace (format=csv: text/csv)',
          schema: LotTrace,
          otherContent: { 'text/csv': CsvText },
        },
        400: invalid,
        404: notFound,
      },
    },
    async (req, res) => {
      const trace = await lots.trace(req.input.params.id);
      if (req.input.query.format === 'json') return res.json(presentLotTrace(trace));
      async function* records() {
        yield* lotTraceCsvRecords(trace);
      }
      await sendCsv(res, trace.lot.row.lot_number, records());
    },
  );

  api.post(
    '/lots/:id/recall',
    {
      operationId: 'recallLot',
      summary: 'Recall a lot: quarantine it and email everyone who got it',
      description:
        'Quarantines the lot (if it is not already), publishes the lot.recalled webhook event, and emails each address the trace has ' +
        "once, however many of their sales took the lot: the sale's recipient (deliveredToEmail), else the charge code's holder " +
        '(its approver) where it has one. The email gives the message, the item, the lot and their sale numbers. Audited.',
      access: LOT_MANAGERS,
      params: LotIdParams,
      body: RecallBody,
      responses: {
        200: { description: 'Recalled', schema: RecallResult },
        400: invalid,
        404: notFound,
      },
    },
    async (req, res) => {
      res.json(await lots.recall(req.input.params.id, req.input.body, actorOf(req)));
    },
  );

  return api.router;
}

/** The trace's CSV download, named after the lot (its number reduced to safe file-name characters). */
async function sendCsv(
  res: Parameters<typeof sendCsvDownload>[0],
  lotNumber: string,
  records: AsyncIterable<unknown[]>,
) {
  await sendCsvDownload(res, {
    name: `lot-${lotNumber.replace(/[^A-Za-z0-9._-]+/g, '_')}-trace.csv`,
    columns: LOT_TRACE_CSV_COLUMNS,
    records,
  });
}
