import type { Router } from 'express';
import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { CsvText, MessageBody, ValidationErrorBody } from '../../http/openapi';
import { actorOf } from '../audit/audit.actor';
import { rechargeBatches } from './finance.batches';
import {
  JOURNAL_COLUMNS,
  LINE_COLUMNS,
  streamJournalCsv,
  streamRechargeCsv,
  streamRechargeXlsx,
  SUMMARY_COLUMNS,
  XLSX_TYPE,
} from './finance.export';
import { presentBatch, presentBatchClosed, presentBatchList, presentRechargeReport } from './finance.present';
import {
  BatchListQuery,
  BatchParams,
  CloseBatch,
  JournalCsv,
  RechargeBatch,
  RechargeBatchClosed,
  RechargeBatchList,
  RechargeQuery,
  RechargeReport,
  RechargeWorkbook,
} from './finance.schemas';
import { financeService } from './finance.service';

const invalid = { description: 'Validation failed', schema: ValidationErrorBody };
const forbidden = 'Missing the finance.export permission';
const batchNotFound = { description: 'Recharge batch not found', schema: MessageBody };
const access = { permission: 'finance.export' } as const;

/** /finance: the recharges report and the recharge batches (the finance office's monthly charge to cost centres). */
export function financeRoutes({ db, docs, reads }: Deps): Router {
  const api = new ApiRouter({ docs, db }, '/api', 'Finance');
  const batches = rechargeBatches(db);

  api.get(
    '/finance/recharges',
    {
      operationId: 'getRecharges',
      summary: 'Recharges per cost centre and charge code (JSON, CSV or XLSX)',
      description:
        'Sales (never quotes) recorded from `from` to `to` (both inclusive; a plain date covers its whole UTC day), optionally of one cost centre ' +
        "(the charge code's, now) and/or one charge code (exact). Per cost centre and charge code: sales, net, VAT and gross after every refund " +
        'made on those sales so far (each line refunded pro rata, rounded half-up as the refund was), and the gross of the paid and unpaid sales; ' +
        'totals over all groups. Amounts are decimal strings.\n\n' +
        '`lines=true` adds one row per sale line, oldest sale first: as sold, its refunded quantity, and its amounts after refunds ' +
        '(JSON: one page of lines, `page`/`limit`; CSV and XLSX: every line).\n\n' +
        `CSV (\`format=csv\`, streamed, UTF-8 with a byte order mark): header \`${SUMMARY_COLUMNS.join(',')}\`, or with lines \`${LINE_COLUMNS.join(',')}\`; a last row \`Total\`. ` +
        'XLSX (`format=xlsx`, streamed): a sheet Recharges (the groups and Total) and with lines a sheet Lines (and Total). ' +
        'Text cells starting with = + - @ tab or CR get a leading apostrophe; amounts stay numbers. Files are named by the period: ' +
        'recharges[-lines]-<from>_<to> (UTC days; `start` without from, today without to).',
      access,
      query: RechargeQuery,
      responses: {
        200: {
          description: 'The report (JSON form; format=csv answers text/csv, format=xlsx a workbook)',
          schema: RechargeReport,
          otherContent: { 'text/csv': CsvText, [XLSX_TYPE]: RechargeWorkbook },
        },
        400: invalid,
        403: forbidden,
      },
    },
    async (req, res) => {
      const { format, lines, page, limit, ...filter } = req.input.query;
      // a read replica when one is healthy and has the caller's own writes (issue 44)
      const finance = financeService(reads.forReports(req));
      const report = await finance.report(filter);
      if (format === 'json') {
        res.json(
          presentRechargeReport(
            report,
            lines ? { ...(await finance.linesPage(filter, page, limit)), page, limit } : undefined,
          ),
        );
        return;
      }
      const stream = lines ? finance.lines(filter) : null;
      if (format === 'csv') await streamRechargeCsv(res, report, stream);
      else await streamRechargeXlsx(res, report, stream);
    },
  );

  api.get(
    '/finance/recharge-batches',
    {
      operationId: 'listRechargeBatches',
      summary: 'List recharge batches',
      description: 'Newest first, with their totals. page default 1, limit default 50 (max 100).',
      access,
      query: BatchListQuery,
      responses: { 200: { description: 'Batches', schema: RechargeBatchList }, 400: invalid, 403: forbidden },
    },
    async (req, res) => {
      const { page, limit } = req.input.query;
      res.json(presentBatchList(await batches.list(page, limit), page, limit));
    },
  );

  api.post(
    '/finance/recharge-batches',
    {
      operationId: 'closeRechargeBatch',
      summary: 'Close a recharge batch',
      description:
        "In one transaction, takes every sale and every refund recorded before `to` (exclusive end; a plain date runs through that UTC day, today's up to the moment of the close) " +
        "that is in no batch yet into a new batch numbered `RC-<YYYYMM>-<n>` (the month of the last day covered, n counting that month's batches). " +
        'A sale enters at its amounts as sold; the refunds of a sale taken by one batch are one negative entry, so a refund recorded after its sale ' +
        "was batched lands in the next batch as an adjustment. Entries copy the charge code's cost centre and the amounts at close time: the batch " +
        'never changes afterwards. Concurrent closes queue, so no sale or refund enters two batches. Recorded in the audit trail (recharge_batch, close).\n\n' +
        '400 when `to` is in the future (a date after today, or a later instant); 409 when there is nothing to close (no batch is created).',
      access,
      body: CloseBatch,
      responses: {
        201: { description: 'Closed', schema: RechargeBatchClosed },
        400: invalid,
        403: forbidden,
        409: { description: 'Nothing recorded before `to` is left outside a batch', schema: MessageBody },
      },
    },
    async (req, res) => {
      const body = req.input.body;
      res.status(201).json(presentBatchClosed(await batches.close(actorOf(req), body)));
    },
  );

  api.get(
    '/finance/recharge-batches/:batch',
    {
      operationId: 'getRechargeBatch',
      summary: 'Read a recharge batch with its totals per cost centre',
      description:
        '`batch` is the id (12) or the number (RC-202611-1). Totals per cost centre, and within it per charge code, as copied at close time.',
      access,
      params: BatchParams,
      responses: {
        200: { description: 'Batch', schema: RechargeBatch },
        400: invalid,
        403: forbidden,
        404: batchNotFound,
      },
    },
    async (req, res) => {
      const { batch } = req.input.params;
      res.json(presentBatch(await batches.get(batch)));
    },
  );

  api.get(
    '/finance/recharge-batches/:batch/journal',
    {
      operationId: 'downloadRechargeBatchJournal',
      summary: "Download a recharge batch's journal (CSV)",
      description:
        `\`batch\` is the id or the number. Streamed CSV (UTF-8 with a byte order mark), header \`${JOURNAL_COLUMNS.join(',')}\`: one row per entry ` +
        "(a sale, or a sale's refunds as a negative adjustment) and ledger account code, by cost centre, charge code and date; Date is the UTC day the " +
        "sale or (last) refund was recorded. Account code is the setting finance.accountCodes' code for the category of the lines' items (by category " +
        "id or name), else its default (empty while the setting is unset); each row sums the entry's lines of that code. Debit is a sale's gross (the " +
        "cost centre is charged), Credit a refund's (given back). No totals row: the rows' Net, VAT and Gross sum to the batch's totals. File name " +
        'journal-<number>_<from>_<to>.csv: the UTC days from the end of the batch before (or the first entry) to the last day the batch covers.',
      access,
      params: BatchParams,
      responses: {
        200: { description: 'Journal', schema: JournalCsv, contentType: 'text/csv' },
        400: invalid,
        403: forbidden,
        404: batchNotFound,
      },
    },
    async (req, res) => {
      const { batch: ref } = req.input.params;
      const { batch, period, entries } = await rechargeBatches(reads.forReports(req)).journal(ref);
      await streamJournalCsv(res, batch, period, entries);
    },
  );

  return api.router;
}
