import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { BadRequestBody } from '../../http/openapi';
import { LABEL_LAYOUTS, MAX_LABELS, SYMBOLOGIES } from './labels.layouts';
import { presentLabelLayout } from './labels.present';
import { LabelLayoutList, LabelsPdf, PrintLabels } from './labels.schemas';
import { labelsService } from './labels.service';

export function labelsRoutes({ db, docs, config }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Labels');
  const labels = labelsService(db, config.publicUrl);

  api.get(
    '/labels/layouts',
    {
      operationId: 'listLabelLayouts',
      summary: 'The label stocks a print can be laid out for',
      description:
        `${LABEL_LAYOUTS.map((layout) => `${layout.id}: ${layout.name}`).join('; ')}. Sizes in millimetres; ` +
        'a label is at marginLeftMm + column * pitchXMm, marginTopMm + row * pitchYMm from the top-left corner.',
      access: 'auth',
      responses: { 200: { description: 'Layouts', schema: LabelLayoutList } },
    },
    (_req, res) => {
      res.json(labels.layouts().map(presentLabelLayout));
    },
  );

  api.post(
    '/labels',
    {
      operationId: 'printLabels',
      summary: 'Item and lot labels as a PDF to print',
      description:
        "Each label shows the item's name (cut short to fit), its category, its SKU in text and as a barcode " +
        `(symbology ${SYMBOLOGIES.join(', ')}; default code128; vector, with its quiet zone), and with showPrice its ` +
        'price before VAT (and with VAT where it fits). copies labels of each line, in order; startPosition (1-based, ' +
        'default 1) is the first free label of a part-used sheet (1 for a roll layout); further sheets as needed. ' +
        `At most ${MAX_LABELS} labels (the sum of copies). 400 names the field: an unknown layout, symbology or item ` +
        '("No item with id 12" on items.0.itemId), a startPosition past the sheet\'s labels, too many labels, a SKU the ' +
        'symbology cannot encode or, in code128, too long to scan on the layout (under one 300 dpi dot a bar). Inactive items print too. ' +
        'lots: [{lotId, copies}] prints lot labels after the item labels (issue 42): the item label with "Lot <lotNumber>" and ' +
        '"Exp <YYYY-MM-DD>" in text, its symbol a GS1 DataMatrix of (01) the GTIN, (17) the expiry YYMMDD and (10) the lot ' +
        '((01)(10) for a lot without expiry) when the item has a GTIN barcode, else a Code 128 of the SKU whatever the symbology ' +
        '(also for a lot number GS1 cannot carry: over 20 characters or outside its character set). An unknown lot is 400 ' +
        '("No lot with id 12" on lots.0.lotId). items or lots must have a line. ' +
        "Issue 43: a hazardous item's label (any GHS pictogram or H statement) has across its top a QR code of PUBLIC_URL/items/<id>/sds " +
        '(its current safety data sheet, after sign-in) and its pictograms (vector; at least 10 mm wide on sheet labels, so an item with more ' +
        'than a sheet label holds is 400 naming the line), and its signal word in place of the category. ' +
        'Answers labels-<SKU>.pdf (one item) or labels-<n>-items.pdf.',
      access: 'manager',
      body: PrintLabels,
      responses: {
        200: { description: 'The labels', schema: LabelsPdf, contentType: 'application/pdf' },
        400: { description: 'Refused: the field named', schema: BadRequestBody },
      },
    },
    async (req, res) => {
      const { filename, ...print } = await labels.prepare(req.input.body);
      res.attachment(filename).type('application/pdf');
      await labels.writePdf(print, res);
    },
  );

  return api.router;
}
