import { z } from 'zod';
import '../../http/openapi';
import { IntId } from '../../http/validate';
import { limitParam, PageParam } from '../../http/pagination';
import { CategoryRef } from '../categories/categories.schemas';

/** What a person without the stores' figures is told of an item's stock: never the count. */
export const AVAILABILITIES = ['in_stock', 'low', 'out'] as const;
export const Availability = z.enum(AVAILABILITIES).openapi({
  description:
    'out: none in stock; low: at or below its minimum stock (the one low-stock rule); in_stock: otherwise. The stock figure itself is never shown.',
});
export type Availability = z.infer<typeof Availability>;

export const CatalogueQuery = z.object({
  search: z
    .string()
    .trim()
    .max(200)
    .optional()
    .openapi({ description: 'case-insensitive substring of name, description or SKU (the items search)' }),
  categoryId: IntId.optional(),
  page: PageParam,
  limit: limitParam(20, 100),
});
export type CatalogueQuery = z.infer<typeof CatalogueQuery>;

export const CatalogueItem = z
  .object({
    id: z.number().int(),
    name: z.string(),
    sku: z.string(),
    description: z.string().nullable(),
    category: CategoryRef,
    price: z.string().openapi({ description: 'decimal string with 2 places, before VAT', example: '12.50' }),
    vatRate: z.string().openapi({ description: "the item's effective VAT rate as a fraction", example: '0.2000' }),
    availability: Availability,
  })
  .openapi('CatalogueItem');
export type CatalogueItem = z.infer<typeof CatalogueItem>;

export const CataloguePage = z
  .object({
    items: z.array(CatalogueItem),
    total: z.number().int(),
    page: z.number().int(),
    limit: z.number().int(),
    totalPages: z.number().int(),
  })
  .openapi('CataloguePage');
export type CataloguePage = z.infer<typeof CataloguePage>;

export const CatalogueChargeCode = z
  .object({
    code: z.string(),
    title: z.string(),
    validFrom: z.string().datetime(),
    validUntil: z.string().datetime(),
    valid: z.boolean().openapi({ description: 'within its validity now' }),
    onHold: z.boolean(),
    holdReason: z.string().nullable(),
    usable: z.boolean().openapi({ description: 'valid now and not on hold: a request on it can be submitted' }),
    approverEmail: z.string().nullable(),
    approvalThreshold: z.string().nullable().openapi({
      description: 'requests totalling more (VAT included) wait for the approver; null: no approval needed',
    }),
    spending: z
      .object({
        sales: z.number().int(),
        totalAmount: z.string(),
        refundedAmount: z.string(),
        netAmount: z.string(),
      })
      .openapi({ description: "the code's sales so far, all time (decimal strings): netAmount is total less refunds" }),
  })
  .openapi('CatalogueChargeCode');
export type CatalogueChargeCode = z.infer<typeof CatalogueChargeCode>;

export const CatalogueChargeCodes = z.array(CatalogueChargeCode).openapi('CatalogueChargeCodes');
