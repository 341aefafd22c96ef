import { z } from 'zod';
import '../../http/openapi';
import { IntId, decimalString } from '../../http/validate';

const SourcePrice = decimalString({ places: 2, min: 0, max: 9_999_999_999 }).openapi({
  type: 'string',
  example: '4.50',
});
const SourceNotes = z.string().trim().max(2000);
/** The supplier's own part number: blank is none; at most one source of a supplier has it (in any case). */
const SupplierSku = z
  .string()
  .trim()
  .max(100)
  .nullable()
  .transform((v) => (v === '' ? null : v))
  .openapi({
    description:
      "the supplier's own part number (catalogue number) for the item, as its invoices print it; invoice lines are matched by it. " +
      'Unique per supplier (any case); blank or null for none',
    example: 'LSD-44120',
  });
const Preferred = z.boolean().openapi({
  description:
    "the item's preferred source, which replenishment orders from (else the cheapest); at most one per item: marking one unmarks the others",
});

export const LinkItem = z
  .object({
    itemId: IntId,
    price: SourcePrice,
    notes: SourceNotes.nullish(),
    supplierSku: SupplierSku.optional(),
    preferred: Preferred.optional().openapi({ description: "default false; true unmarks the item's other sources" }),
  })
  .openapi('LinkItem');
export type LinkItem = z.infer<typeof LinkItem>;

export const UpdateItemSource = z
  .object({ price: SourcePrice, notes: SourceNotes.nullable(), supplierSku: SupplierSku, preferred: Preferred })
  .partial()
  .openapi('UpdateItemSource');
export type UpdateItemSource = z.infer<typeof UpdateItemSource>;

export const ItemSource = z
  .object({
    id: z.number().int(),
    supplierId: z.string(),
    itemId: z.number().int(),
    price: z.string().nullable().openapi({
      description:
        'supplier price, decimal string; null when the setting access.profile is strict and the caller is below manager',
    }),
    notes: z.string().nullable(),
    supplierSku: z
      .string()
      .nullable()
      .openapi({ description: "the supplier's own part number for the item; null when not known" }),
    preferred: Preferred,
    createdAt: z.string(),
    item: z.object({ id: z.number().int(), name: z.string(), sku: z.string(), isActive: z.boolean() }),
  })
  .openapi('ItemSource');
export type ItemSource = z.infer<typeof ItemSource>;
