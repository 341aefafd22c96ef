import { z } from 'zod';
import '../../http/openapi';
import { limitParam, PageParam } from '../../http/pagination';
import { DateOrTimestamp, QueryBoolean } from '../../http/validate';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

/** The first and last instant a since/until pair covers, as whereInDateRange reads them (a plain date is a whole UTC day). */
const rangeStart = (since: string) => Date.parse(DATE_ONLY.test(since) ? `${since}T00:00:00.000Z` : since);
const rangeEnd = (until: string) =>
  DATE_ONLY.test(until) ? Date.parse(`${until}T00:00:00.000Z`) + DAY_MS - 1 : Date.parse(until);

/** since after until selects nothing: refused, so a swapped pair is not read as "no sales". */
export const sinceNotAfterUntil = (v: { since?: string; until?: string }) =>
  !v.since || !v.until || rangeStart(v.since) <= rangeEnd(v.until);
export const rangeIssue = { error: 'must not be before since', path: ['until'] };

/** since/until: inclusive bounds on the sale's time; a date (YYYY-MM-DD) is a whole UTC day. */
export const Since = DateOrTimestamp.optional().openapi({
  description: 'sales at or after: a date (YYYY-MM-DD, from the start of that UTC day) or an ISO 8601 timestamp',
});
export const Until = DateOrTimestamp.optional().openapi({
  description: 'sales at or before: a date (YYYY-MM-DD, to the end of that UTC day) or an ISO 8601 timestamp',
});
export const ChargeCodeFilter = z
  .string()
  .trim()
  .max(64)
  .optional()
  .openapi({ description: 'part of the charge code, case-insensitive (as the sales list filters)' });

export const McpSalesQuery = z
  .object({
    page: PageParam.openapi({ description: 'default 1' }),
    limit: limitParam(50, 100),
    since: Since,
    until: Until,
    chargeCode: ChargeCodeFilter,
  })
  .refine(sinceNotAfterUntil, rangeIssue);
export type McpSalesQuery = z.infer<typeof McpSalesQuery>;

export const McpPagination = z.object({ total: z.number().int(), page: z.number().int(), limit: z.number().int() });
export type McpPagination = z.infer<typeof McpPagination>;

export const McpSale = z.object({
  id: z.string().openapi({ description: 'the sale id, as a string' }),
  charge_code: z.string(),
  total: z.number().openapi({ description: 'the sale total with VAT, as recorded (before any refund)' }),
  items: z
    .number()
    .int()
    .openapi({ description: 'the number of lines on the sale (as the report CSV counts Items Count), not of units' }),
  timestamp: z.string().openapi({ description: 'when the sale was recorded, ISO 8601 UTC' }),
});
export type McpSale = z.infer<typeof McpSale>;

export const McpSalesPage = z.object({ sales: z.array(McpSale), pagination: McpPagination }).openapi('McpSalesPage');
export type McpSalesPage = z.infer<typeof McpSalesPage>;

export const McpInventoryQuery = z.object({
  page: PageParam.openapi({ description: 'default 1' }),
  limit: limitParam(50, 100),
  search: z
    .string()
    .trim()
    .max(200)
    .optional()
    .openapi({ description: 'case-insensitive part of the name, description or SKU' }),
  category: z.string().trim().min(1).max(100).optional().openapi({
    description:
      'a category name (case-insensitive, exact), as listed in `categories`; an unknown name matches nothing',
  }),
  lowStock: QueryBoolean.optional().openapi({
    type: 'boolean',
    description: 'true: only items at or below their minimum stock; false: only items above it; omitted: both',
  }),
});
export type McpInventoryQuery = z.infer<typeof McpInventoryQuery>;

export const McpInventoryItem = z.object({
  id: z.string().openapi({ description: 'the item id, as a string' }),
  name: z.string(),
  category: z.string().openapi({ description: 'the category name' }),
  stock: z.number(),
  price: z.number().openapi({ description: 'unit price before VAT' }),
});
export type McpInventoryItem = z.infer<typeof McpInventoryItem>;

export const McpInventoryPage = z
  .object({
    items: z.array(McpInventoryItem),
    categories: z
      .array(z.string())
      .openapi({ description: 'every category name, alphabetical: the values `category` takes' }),
    pagination: McpPagination,
  })
  .openapi('McpInventoryPage');
export type McpInventoryPage = z.infer<typeof McpInventoryPage>;
