import { z } from 'zod';
import { DateOrTimestamp } from '../http/validate';
import { ExcludedCategory } from '../modules/chargecodes/chargecodes.schemas';
import { Item, StockChangeResult, StockLevel } from '../modules/items/items.schemas';
import { Quantity, QuoteSaved } from '../modules/sales/quotes.schemas';
import { SalesLowStockReport, StockCheckResult } from '../modules/sales/sales.schemas';
import { MOVEMENT_TYPES, StockMovement } from '../modules/stock-movements/stock-movements.schemas';
import { McpPagination, rangeIssue, sinceNotAfterUntil } from '../modules/mcp-data/mcp-data.schemas';

/**
 * The input and output schemas of the /mcp tools. The SDK validates the arguments with the input
 * schema (a refusal comes back as a tool error) and the structured result with the output schema;
 * the descriptions are what the client's model reads.
 */

/** Every tool's page holds at most this many rows, whatever is asked. */
export const TOOL_PAGE_MAX = 100;

const Page = z.number().int().min(1).default(1).describe('page number, from 1');
const Limit = (byDefault: number) =>
  z
    .number()
    .int()
    .min(1)
    .max(TOOL_PAGE_MAX)
    .default(byDefault)
    .describe(`rows per page, 1 to ${TOOL_PAGE_MAX} (default ${byDefault})`);

const ItemId = z.number().int().positive().max(2_147_483_647);
const Sku = z.string().trim().min(1).max(100);
export const itemRefFields = {
  itemId: ItemId.optional().describe('the item id (give itemId or sku)'),
  sku: Sku.optional().describe('the item SKU, exact (give itemId or sku)'),
};
export const oneItemRef = (v: { itemId?: number; sku?: string }) => (v.itemId === undefined) !== (v.sku === undefined);
export const oneItemRefIssue = { error: 'give exactly one of itemId or sku', path: ['itemId'] };

const Since = DateOrTimestamp.optional().describe(
  'from (inclusive): YYYY-MM-DD (start of that UTC day) or an ISO 8601 timestamp',
);
const Until = DateOrTimestamp.optional().describe(
  'to (inclusive): YYYY-MM-DD (end of that UTC day) or an ISO 8601 timestamp',
);
const ChargeCodePart = z.string().trim().max(64).optional().describe('part of the charge code, case-insensitive');

// ---- search_items ----------------------------------------------------------------

export const SearchItemsInput = z.object({
  search: z
    .string()
    .trim()
    .max(200)
    .optional()
    .describe('text found in the name, description or SKU (case-insensitive)'),
  category: z.string().trim().min(1).max(100).optional().describe('category name, exact but case-insensitive'),
  lowStock: z
    .boolean()
    .optional()
    .describe('true: only items at or below their minimum stock; false: only items above it'),
  page: Page,
  limit: Limit(20),
});

export const InventoryEntry = z.object({
  id: z.number().int(),
  sku: z.string(),
  name: z.string(),
  category: z.string(),
  stock: z.number(),
  minimumStock: z.number(),
  price: z.string().describe('unit price before VAT, a decimal string'),
  lowStock: z.boolean(),
});
export type InventoryEntry = z.infer<typeof InventoryEntry>;

export const SearchItemsOutput = z.object({
  items: z.array(InventoryEntry),
  categories: z.array(z.string()),
  pagination: McpPagination,
});
export type SearchItemsOutput = z.infer<typeof SearchItemsOutput>;

// ---- get_item --------------------------------------------------------------------

export const GetItemInput = z.object(itemRefFields).refine(oneItemRef, oneItemRefIssue);
export const GetItemOutput = z.object({ item: Item });

// ---- list_low_stock --------------------------------------------------------------

export const ListLowStockInput = z.object({ page: Page, limit: Limit(50) });
export const ListLowStockOutput = z.object({ items: SalesLowStockReport.shape.items, pagination: McpPagination });
export type ListLowStockOutput = z.infer<typeof ListLowStockOutput>;

// ---- stock_movements -------------------------------------------------------------

export const StockMovementsInput = z
  .object({
    ...itemRefFields,
    limit: Limit(20),
    beforeId: ItemId.optional().describe(
      'the next page: the nextBeforeId of the previous answer (movements older than that id)',
    ),
  })
  .refine(oneItemRef, oneItemRefIssue);
export const StockMovementsOutput = z.object({
  movements: z.array(StockMovement),
  nextBeforeId: z
    .number()
    .int()
    .nullable()
    .describe('pass as beforeId for the older movements; null when there are none'),
});
export type StockMovementsOutput = z.infer<typeof StockMovementsOutput>;

// ---- check_stock -----------------------------------------------------------------

export const CheckStockInput = z.object({
  lines: z
    .array(
      z
        .object({ ...itemRefFields, quantity: Quantity.describe('how many are wanted (up to 2 decimal places)') })
        .refine(oneItemRef, oneItemRefIssue),
    )
    .min(1)
    .max(TOOL_PAGE_MAX)
    .describe('the basket: one entry per line; lines on the same item are checked by their sum'),
});
export const CheckStockOutput = StockCheckResult;

// ---- sales_summary ---------------------------------------------------------------

export const SalesFigures = z.object({
  count: z.number().int().describe('number of sales'),
  total: z.number().describe('their totals with VAT, as recorded'),
  refunds: z.number().describe('refunded of them'),
  net: z.number().describe('total less refunds'),
});
export type SalesFigures = z.infer<typeof SalesFigures>;

export const SalesSummaryInput = z
  .object({
    since: Since,
    until: Until,
    chargeCode: ChargeCodePart,
    groupBy: z
      .enum(['day', 'chargeCode'])
      .default('day')
      .describe('day: one group per UTC day with sales, oldest first; chargeCode: one per code, highest net first'),
    page: Page,
    limit: Limit(31),
  })
  .refine(sinceNotAfterUntil, rangeIssue);
export const SalesSummaryOutput = z.object({
  groupBy: z.enum(['day', 'chargeCode']),
  totals: SalesFigures,
  groups: z.array(SalesFigures.extend({ key: z.string().describe('the day (YYYY-MM-DD) or the charge code') })),
  pagination: McpPagination.describe('total: the number of groups'),
});
export type SalesSummaryOutput = z.infer<typeof SalesSummaryOutput>;

// ---- charge_code_status ----------------------------------------------------------

export const ChargeCodeStatusInput = z.object({
  code: z.string().trim().min(1).max(64).describe('the charge code, exact'),
});
export const ChargeCodeStatusOutput = z.object({
  code: z.string(),
  title: z.string(),
  costCentre: z.string(),
  validFrom: z.string(),
  validUntil: z.string(),
  valid: z.boolean().describe('a sale could be charged to it now (inside its validity window and not on hold)'),
  invalidReason: z.string().nullable().describe('why not, as the counter would say it'),
  onHold: z.boolean(),
  holdReason: z.string().nullable(),
  expiringSoon: z.boolean().describe('it expires within 30 days'),
  daysUntilExpiry: z.number().int().nullable(),
  excludedCategories: z.array(ExcludedCategory).describe('items of these categories cannot be charged to it'),
  spent: SalesFigures.describe('all sales charged to it so far'),
});
export type ChargeCodeStatusOutput = z.infer<typeof ChargeCodeStatusOutput>;

// ---- record_stock_change (write) -------------------------------------------------

export const RecordStockChangeInput = z
  .object({
    ...itemRefFields,
    type: z.enum(MOVEMENT_TYPES).describe('in: received; out: taken out; adjustment: the counted level'),
    quantity: StockLevel.describe('in/out: how many (> 0); adjustment: the new stock level (>= 0)'),
    reason: z.string().trim().min(1).max(400).describe('why: recorded on the stock movement with the key name'),
  })
  .refine(oneItemRef, oneItemRefIssue);
export const RecordStockChangeOutput = StockChangeResult;

// ---- create_draft_quote (write) --------------------------------------------------

export const CreateDraftQuoteInput = z.object({
  chargeCode: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .describe('the charge code to bill; it must be valid now and allow every line'),
  lines: z
    .array(
      z
        .object({ ...itemRefFields, quantity: Quantity.describe('how many (up to 2 decimal places)') })
        .refine(oneItemRef, oneItemRefIssue),
    )
    .min(1)
    .max(TOOL_PAGE_MAX),
  vatApplied: z.boolean().default(true),
  customerNotes: z.string().trim().max(2000).optional(),
});
export const CreateDraftQuoteOutput = QuoteSaved;
