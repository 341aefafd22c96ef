import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { sendCsvDownload } from '../../http/send-file';
import { CsvText, ValidationErrorBody } from '../../http/openapi';
import { AUDIT_CSV_COLUMNS, auditCsvRecord, presentAuditPage } from './audit.present';
import { AuditPage, AuditQuery } from './audit.schemas';
import { auditTrail } from './audit.service';

/** Rows per read while a CSV export streams. */
const CSV_BATCH = 1_000;

/** GET /api/audit: the append-only trail for admins. Nothing updates or deletes it (the table refuses it too). */
export function auditRoutes({ db, docs, reads }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Audit');
  const trail = auditTrail(db);

  api.get(
    '/audit',
    {
      operationId: 'listAuditEvents',
      summary: 'The audit trail: who changed what, when, with the values before and after',
      description:
        'Every change that is not a stock movement (those are the ledger), newest first: users, permissions, settings, VAT rates, charge codes, ' +
        'prices, sales, orders, backups, archives, tokens, MCP keys, sign-ins. Secrets never appear: a changed password, PIN or key reads "[redacted]". ' +
        'format=csv downloads every matching row.',
      access: 'admin',
      query: AuditQuery,
      responses: {
        200: {
          description: 'A page of events (format=csv: text/csv)',
          schema: AuditPage,
          otherContent: { 'text/csv': CsvText },
        },
        400: { description: 'Validation failed', schema: ValidationErrorBody },
      },
    },
    async (req, res) => {
      const query = req.input.query;
      if (query.format === 'json') {
        const { rows, total } = await trail.page(query, { page: query.page, limit: query.limit });
        return res.json(presentAuditPage(rows, query.page, query.limit, total));
      }
      // the CSV reads a read replica when one is healthy and has the caller's own writes (issue 44)
      const csvTrail = auditTrail(reads.forReports(req));
      async function* records() {
        for (let page = 1; ; page += 1) {
          const rows = await csvTrail.rows(query, { page, limit: CSV_BATCH });
          for (const row of rows) yield auditCsvRecord(row);
          if (rows.length < CSV_BATCH) return;
        }
      }
      await sendCsvDownload(res, {
        name: `audit-${new Date().toISOString().slice(0, 10)}.csv`,
        columns: AUDIT_CSV_COLUMNS,
        records: records(),
      });
    },
  );

  return api.router;
}
