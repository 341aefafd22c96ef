import { z } from 'zod';
import '../../http/openapi';
import { limitParam, PageParam } from '../../http/pagination';
import { IntId } from '../../http/validate';
import { StockLevel } from '../items/items.schemas';
import { ExpiryDate, LotNumber } from '../lots/lots.schemas';
import { UserRef } from '../users/users.schemas';

export const STOCKTAKE_STATUSES = ['open', 'posted', 'cancelled'] as const;
export type StocktakeStatus = (typeof STOCKTAKE_STATUSES)[number];

export const COUNT_MODES = ['add', 'set'] as const;
export type CountMode = (typeof COUNT_MODES)[number];

export const UNCOUNTED_CHOICES = ['ignore', 'zero'] as const;
export type UncountedChoice = (typeof UNCOUNTED_CHOICES)[number];

const idList = (what: string) =>
  z
    .array(IntId)
    .min(1, { error: `at least one ${what} id is required` })
    .max(50_000);

const SCOPE_SHAPES = 'must be {all: true}, {categoryIds: [..]} or {itemIds: [..]}';

/** What a stocktake counts: every active item, the active items of some categories, or named items. */
export type StocktakeScope = { all: true } | { categoryIds: number[] } | { itemIds: number[] };

export const StocktakeScopeInput = z
  .object({
    all: z.literal(true, { error: 'must be true' }).optional(),
    categoryIds: idList('category').optional(),
    itemIds: idList('item').optional(),
  })
  .strict()
  .refine((s) => [s.all, s.categoryIds, s.itemIds].filter((v) => v !== undefined).length === 1, {
    error: SCOPE_SHAPES,
  })
  .transform((s): StocktakeScope =>
    s.categoryIds ? { categoryIds: s.categoryIds } : s.itemIds ? { itemIds: s.itemIds } : { all: true },
  )
  .openapi('StocktakeScopeInput', {
    description:
      'exactly one of {all: true}: every active item; {categoryIds}: the active items of those categories; {itemIds}: those items',
  });

const ScopeOut = z
  .object({
    all: z.boolean().optional(),
    categoryIds: z.array(z.number().int()).optional(),
    itemIds: z.array(z.number().int()).optional(),
  })
  .openapi('StocktakeScope');

export const CreateStocktake = z
  .object({
    name: z.string().trim().max(200).nullish(),
    scope: StocktakeScopeInput,
    blind: z.boolean().default(false).openapi({
      description: 'a blind count: a caller below manager never receives expected, variance or varianceValue',
    }),
  })
  .openapi('CreateStocktake');
export type CreateStocktake = z.infer<typeof CreateStocktake>;

export const StocktakeParams = z.object({ id: IntId });
export const StocktakeCountParams = z.object({ id: IntId, countId: IntId });

export const StocktakeListQuery = z.object({
  status: z.enum(STOCKTAKE_STATUSES).optional(),
  page: PageParam,
  limit: limitParam(20, 100),
});
export type StocktakeListQuery = z.infer<typeof StocktakeListQuery>;

export const CountBody = z
  .object({
    code: z.string().trim().min(1, { error: 'is required' }).max(500).optional().openapi({
      description:
        "a scanned or typed code: the item's SKU (or a barcode, GET /api/items/lookup); a GS1 scan carrying (01) GTIN and (10) lot counts that lot (its (17) expiry kept for the lot posting creates)",
    }),
    itemId: IntId.optional(),
    lotNumber: LotNumber.optional().openapi({
      description:
        'a lot-tracked item: the lot counted (required unless the code is a GS1 scan carrying it: 400 "Lot number is required for <SKU>")',
    }),
    expiresOn: ExpiryDate.nullable().optional().openapi({
      description: "the lot's expiry, for a lot the item does not have yet (created when the stocktake is posted)",
    }),
    quantity: StockLevel.openapi({ description: 'how many were counted (>= 0, at most 2 decimal places)' }),
    mode: z.enum(COUNT_MODES).default('add').openapi({
      description: "add (default): added to the line's count (two shelves, two people); set: replaces it",
    }),
  })
  .refine((b) => (b.code === undefined) !== (b.itemId === undefined), {
    error: 'send code or itemId (one of them)',
    path: ['code'],
  })
  .openapi('StocktakeCount');
export type CountBody = z.infer<typeof CountBody>;

export const ChangeCountBody = z
  .object({
    quantity: StockLevel.openapi({
      description: 'what the scan counted (>= 0, at most 2 decimal places); 0 undoes it',
    }),
  })
  .openapi('StocktakeCountChange');
export type ChangeCountBody = z.infer<typeof ChangeCountBody>;

export const PostStocktake = z
  .object({
    uncounted: z.enum(UNCOUNTED_CHOICES).default('ignore').openapi({
      description:
        "ignore (default): lines nobody counted change nothing; zero: they are counted as 0 (the item's stock at posting is their expected)",
    }),
  })
  .openapi('PostStocktake');
export type PostStocktake = z.infer<typeof PostStocktake>;

export const CountsQuery = z.object({ limit: limitParam(20, 500) });

export const SuggestionsQuery = z.object({
  days: z.coerce
    .number({ error: 'must be an integer between 1 and 3650' })
    .int({ error: 'must be an integer between 1 and 3650' })
    .min(1, { error: 'must be an integer between 1 and 3650' })
    .max(3650, { error: 'must be an integer between 1 and 3650' })
    .default(90)
    .openapi({ description: 'not counted for this many days (default 90)' }),
  limit: limitParam(50, 1000),
});

export const ReportQuery = z.object({
  format: z.enum(['json', 'csv']).default('json').openapi({ description: 'csv: a download for the auditors' }),
});

const decimalOrNull = (description: string) => z.number().nullable().openapi({ description });
const moneyOrNull = (description: string) =>
  z
    .string()
    .nullable()
    .openapi({ description: `decimal string with 2 places; ${description}` });
const BLIND = 'null for a blind stocktake read by a caller below manager';

export const StocktakeLine = z
  .object({
    itemId: z.number().int(),
    sku: z.string(),
    name: z.string(),
    lotNumber: z.string().nullable().openapi({
      description:
        "a lot-tracked item's line of one lot; null: the item's line (an untracked item, or a tracked one no lot of which is counted yet)",
    }),
    expiresOn: z.string().nullable().openapi({
      description:
        'the expiry the scan of a lot carried (YYYY-MM-DD), given to the lot posting creates; null when none',
    }),
    found: z.boolean().openapi({ description: 'added by a count: the item was outside the scope' }),
    expected: decimalOrNull(`the item's stock when the line was first counted; null until then, and ${BLIND}`),
    counted: z.number().nullable().openapi({ description: 'null until counted' }),
    variance: decimalOrNull(`counted - expected; null until counted, and ${BLIND}`),
    unitPrice: moneyOrNull(`the price valuing the variance (fixed when posted); ${BLIND}`),
    varianceValue: moneyOrNull(`variance x unitPrice; null until counted, and ${BLIND}`),
    countedBy: UserRef.nullable().openapi({ description: 'who counted the line last' }),
    countedAt: z.string().datetime().nullable(),
  })
  .openapi('StocktakeLine');

export const StocktakeTotals = z
  .object({
    linesTotal: z.number().int(),
    linesCounted: z.number().int(),
    linesFound: z.number().int(),
    itemsWithVariance: z.number().int().nullable().openapi({ description: BLIND }),
    varianceValue: moneyOrNull(`the sum of the lines' variance values (net); ${BLIND}`),
  })
  .openapi('StocktakeTotals');

const stocktakeFields = {
  id: z.number().int(),
  reference: z.string().openapi({ example: 'ST-20261127-4' }),
  name: z.string().nullable(),
  status: z.enum(STOCKTAKE_STATUSES),
  blind: z.boolean(),
  scope: ScopeOut,
  createdBy: UserRef.nullable(),
  createdAt: z.string().datetime(),
  postedBy: UserRef.nullable(),
  postedAt: z.string().datetime().nullable(),
  cancelledBy: UserRef.nullable(),
  cancelledAt: z.string().datetime().nullable(),
  uncounted: z.enum(UNCOUNTED_CHOICES).nullable().openapi({ description: 'how uncounted lines were posted' }),
};

export const StocktakeSummary = z
  .object({ ...stocktakeFields, linesTotal: z.number().int(), linesCounted: z.number().int() })
  .openapi('StocktakeSummary');

export const StocktakePage = z
  .object({
    stocktakes: z.array(StocktakeSummary),
    pagination: z.object({ page: z.number(), limit: z.number(), total: z.number(), totalPages: z.number() }),
  })
  .openapi('StocktakePage');

export const Stocktake = z
  .object({ ...stocktakeFields, totals: StocktakeTotals, lines: z.array(StocktakeLine) })
  .openapi('Stocktake');

export const StocktakeCountRecord = z
  .object({
    id: z.number().int(),
    itemId: z.number().int(),
    sku: z.string(),
    name: z.string(),
    lotNumber: z.string().nullable().openapi({ description: 'the lot counted; null for an item not tracked by lot' }),
    mode: z.enum(COUNT_MODES),
    quantity: z.number(),
    previousCounted: z.number().nullable().openapi({ description: "the line's count before this scan" }),
    counted: z.number().openapi({ description: "the line's count after this scan" }),
    countedBy: UserRef.nullable(),
    countedAt: z.string().datetime(),
    undoneAt: z.string().datetime().nullable(),
  })
  .openapi('StocktakeCountRecord');

export const CountResult = StocktakeLine.extend({
  count: StocktakeCountRecord.openapi({ description: 'the scan just recorded (its id undoes it)' }),
}).openapi('StocktakeCountResult');

export const UndoResult = z
  .object({
    count: StocktakeCountRecord,
    line: StocktakeLine.nullable().openapi({ description: 'the line now; null when a found line lost its last scan' }),
  })
  .openapi('StocktakeUndoResult');

export const CountList = z.object({ counts: z.array(StocktakeCountRecord) }).openapi('StocktakeCountList');

export const PostResult = z
  .object({
    reference: z.string(),
    itemsCounted: z.number().int(),
    itemsAdjusted: z.number().int(),
    varianceValue: z.string().openapi({ description: 'decimal string: the net value of the adjustments' }),
    movements: z.number().int().openapi({ description: 'how many adjustment movements were written' }),
  })
  .openapi('StocktakePostResult');

export const Suggestion = z
  .object({
    itemId: z.number().int(),
    sku: z.string(),
    name: z.string(),
    category: z.object({ id: z.number().int(), name: z.string() }),
    currentStock: z.number(),
    price: z.string(),
    stockValue: z.string().openapi({ description: 'price x currentStock, decimal string' }),
    lastCountedAt: z.string().datetime().nullable().openapi({ description: 'null: never counted' }),
  })
  .openapi('StocktakeSuggestion');

export const SuggestionList = z
  .object({ days: z.number().int(), items: z.array(Suggestion) })
  .openapi('StocktakeSuggestions');

/** The report's CSV (text/csv). */
export const ReportCsv = z.string();

export const ChangeCountResult = z
  .object({
    line: StocktakeLine.nullable().openapi({ description: 'the line now; null when a found line lost its last scan' }),
    count: StocktakeCountRecord.nullable().openapi({
      description: 'the new scan (its id undoes it); null for quantity 0; the scan itself when unchanged',
    }),
  })
  .openapi('StocktakeCountChangeResult');
