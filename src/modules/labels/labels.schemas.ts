import { z } from 'zod';
import '../../http/openapi';
import { MAX_INT4 } from '../../http/validate';
import { MAX_LABELS, SYMBOLOGIES } from './labels.layouts';

export const LabelLayout = z
  .object({
    id: z.string().openapi({ example: 'avery-l7160' }),
    name: z.string(),
    pageWidthMm: z.number(),
    pageHeightMm: z.number(),
    columns: z.number().int(),
    rows: z.number().int(),
    labelWidthMm: z.number(),
    labelHeightMm: z.number(),
    marginTopMm: z.number().openapi({ description: "from the page's top edge to the first row of labels" }),
    marginLeftMm: z.number().openapi({ description: "from the page's left edge to the first column of labels" }),
    pitchXMm: z.number().openapi({ description: "from one column's left edge to the next one's" }),
    pitchYMm: z.number().openapi({ description: "from one row's top edge to the next one's" }),
  })
  .openapi('LabelLayout');
export type LabelLayoutBody = z.infer<typeof LabelLayout>;
export const LabelLayoutList = z.array(LabelLayout);

const PositiveInt = (name: string) =>
  z
    .number({ error: `${name} must be a whole number` })
    .int({ error: `${name} must be a whole number` })
    .min(1, { error: `${name} must be at least 1` })
    .max(MAX_INT4, { error: `${name} is too large` });

export const LabelLine = z
  .object({
    itemId: PositiveInt('itemId'),
    copies: PositiveInt('copies').max(MAX_LABELS, { error: `copies must be at most ${MAX_LABELS}` }),
  })
  .openapi('LabelLine');
export type LabelLine = z.infer<typeof LabelLine>;

export const LotLabelLine = z
  .object({
    lotId: PositiveInt('lotId').openapi({ description: 'a lot id, as GET /api/items/{id}/lots answers it' }),
    copies: PositiveInt('copies').max(MAX_LABELS, { error: `copies must be at most ${MAX_LABELS}` }),
  })
  .openapi('LotLabelLine');
export type LotLabelLine = z.infer<typeof LotLabelLine>;

export const PrintLabels = z
  .object({
    layout: z
      .string({ error: 'is required' })
      .max(100)
      .openapi({ description: 'a layout id from GET /api/labels/layouts', example: 'avery-l7160' }),
    items: z
      .array(LabelLine, { error: 'must be a list' })
      .max(MAX_LABELS, { error: `at most ${MAX_LABELS} lines` })
      .optional()
      .openapi({ description: 'item labels; items or lots must have a line' }),
    lots: z
      .array(LotLabelLine, { error: 'must be a list' })
      .max(MAX_LABELS, { error: `at most ${MAX_LABELS} lines` })
      .optional()
      .openapi({
        description:
          'lot labels (issue 42): the item label with the lot number and expiry, its symbol a GS1 DataMatrix ' +
          '(01)(17)(10) when the item has a GTIN, else a Code 128 of the SKU',
      }),
    symbology: z
      .string()
      .max(100)
      .optional()
      .openapi({ description: `one of ${SYMBOLOGIES.join(', ')} (default code128)`, example: 'code128' }),
    startPosition: PositiveInt('startPosition')
      .optional()
      .openapi({ description: 'the 1-based cell of the first sheet to start on (default 1)' }),
    showPrice: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .superRefine((body, ctx) => {
    if ((body.items?.length ?? 0) + (body.lots?.length ?? 0) === 0)
      ctx.addIssue({ code: 'custom', path: ['items'], message: 'at least one item or lot is required' });
  })
  .openapi('PrintLabels');
export type PrintLabels = z.infer<typeof PrintLabels>;

export const LabelsPdf = z.string().openapi({ type: 'string', format: 'binary', description: 'The labels as a PDF' });
