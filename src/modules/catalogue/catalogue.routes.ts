import type { Deps } from '../../deps';
import { currentUser } from '../../auth/guards';
import { ApiRouter } from '../../http/api-router';
import { ValidationErrorBody } from '../../http/openapi';
import { presentCatalogueChargeCode, presentCataloguePage } from './catalogue.present';
import { CatalogueChargeCodes, CatalogueQuery, CataloguePage } from './catalogue.schemas';
import { catalogueService } from './catalogue.service';

/** The researchers' door onto the stores (issue 33): open to everyone signed in, a requester included. */
export function catalogueRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Catalogue');
  const catalogue = catalogueService(db);
  const invalid = { description: 'Validation failed', schema: ValidationErrorBody };

  api.get(
    '/catalogue/charge-codes',
    {
      operationId: 'listMyChargeCodes',
      summary: 'The charge codes the signed-in person may charge',
      description:
        "The codes whose authorised users include the signed-in person's email (case-insensitively), by code: title, validity, hold, " +
        'the approver and threshold, and the spending so far (the sales figures of the code, all time).',
      access: 'any-signed-in',
      responses: { 200: { description: 'Charge codes', schema: CatalogueChargeCodes } },
    },
    async (req, res) => {
      const now = new Date();
      res.json((await catalogue.chargeCodesOf(currentUser(req).email)).map((c) => presentCatalogueChargeCode(c, now)));
    },
  );

  api.get(
    '/catalogue',
    {
      operationId: 'listCatalogue',
      summary: 'The catalogue: active items and their availability',
      description:
        'Active items by name, filtered by search (name, description or SKU, case-insensitive) and categoryId: id, name, sku, description, ' +
        'category, price, VAT rate and availability (in_stock, low, out) of what it has for sale (an item tracked by lot: its lots neither ' +
        'expired nor quarantined), never the stock figure. page default 1, limit default 20 (max 100).',
      access: 'any-signed-in',
      query: CatalogueQuery,
      responses: { 200: { description: 'One page of the catalogue', schema: CataloguePage }, 400: invalid },
    },
    async (req, res) => {
      const query = req.input.query;
      res.json(presentCataloguePage(await catalogue.items(query), query.page, query.limit));
    },
  );

  return api.router;
}
