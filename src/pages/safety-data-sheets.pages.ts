import type { Router } from 'express';
import type { Deps } from '../deps';
import { IdParams } from '../http/validate';
import { safetyDataSheetsService, sdsPdfHeaders } from '../modules/safety-data-sheets/safety-data-sheets.service';
import { PageRouter } from './page-route';

/**
 * Issue 43: `/items/{id}/sds`, the page a label's QR code opens (PUBLIC_URL/items/<id>/sds): after
 * sign-in, anyone (a requester included) gets the item's current safety data sheet, or the 404
 * page when it has none. `/reports/sds`: the hazardous items the sds_missing_or_old alert counts.
 */
export function safetyDataSheetsPages({ db }: Deps): Router {
  const pages = new PageRouter(db);
  const sheets = safetyDataSheetsService(db);

  pages.get('/items/:id/sds', { access: 'requester', params: IdParams }, async (req, res) => {
    const file = await sheets.current(req.input.params.id);
    res.set(sdsPdfHeaders(file)).send(file.data);
  });

  pages.get('/reports/sds', { access: 'user' }, async (_req, res) => {
    const { rows, years } = await sheets.due();
    res.render('reports/sds', {
      title: 'Safety data sheets due',
      description: `Hazardous items without a safety data sheet, or whose current one is older than ${years} years.`,
      years,
      items: rows.map((row) => ({
        id: row.item_id,
        sku: row.item_sku,
        name: row.item_name,
        revisionDate: row.revision_date,
      })),
    });
  });

  return pages.router;
}
