import { z } from 'zod';
import '../../http/openapi';
import { IntId, decimalString } from '../../http/validate';
import { ExtractedData, StoredInvoice } from '../invoices/invoices.schemas';
import { Price } from '../items/items.schemas';
import { ExpiryDate, LotNumber } from '../lots/lots.schemas';
import { D } from '../../lib/money';
import { SupplierIdValue } from '../suppliers/suppliers.schemas';
import { limitParam } from '../../http/pagination';

/** An order's statuses: the spec's pending and received, partly received between, and cancelled (issue 28). */
export const ORDER_STATUSES = ['pending', 'partially_received', 'received', 'cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** {id} in an order path: the numeric id (12) or the orderId (O1012). */
export const OrderParams = z.object({
  id: z
    .string()
    .regex(/^(?:\d{1,10}|O\d{1,18})$/, { error: 'must be an order id (e.g. 12) or an orderId (e.g. O1012)' })
    .openapi({ example: 'O1001' }),
});

const quantity = decimalString({ places: 2, min: 0.01, max: 999_999_999 }).openapi({ type: 'string', example: '10' });
const unitCost = decimalString({ places: 2, min: 0, max: 9_999_999_999 }).openapi({ type: 'string', example: '2.50' });
const lineName = z.string().trim().min(1, { error: 'is required' }).max(300);

export const OrderLineInput = z
  .object({
    itemId: IntId.nullish(),
    name: lineName.optional(),
    sku: z.string().trim().max(100).nullish(),
    quantity,
    unitCost,
  })
  .refine((l) => l.itemId != null || l.name !== undefined, {
    error: 'name is required for a line without itemId',
    path: ['name'],
  });

export const CreateOrder = z
  .object({
    supplierId: SupplierIdValue,
    notes: z.string().trim().max(5000).nullish(),
    invoiceNumber: z.string().trim().max(100).nullish(),
    items: z.array(OrderLineInput).min(1, { error: 'at least one line is required' }).max(500),
  })
  .openapi('CreateOrder');
export type CreateOrder = z.infer<typeof CreateOrder>;

// import-from-invoice takes back what upload-invoice extracted, so the extractedData names work too.
const ImportLine = z.preprocess(
  (v) =>
    v && typeof v === 'object' && !('unitCost' in v) && 'unitPrice' in v
      ? { ...v, unitCost: (v as { unitPrice: unknown }).unitPrice }
      : v,
  z.object({ name: lineName, sku: z.string().trim().max(100).nullish(), quantity, unitCost }),
);

export const ParsedData = z.preprocess(
  (v) =>
    v && typeof v === 'object' && !('supplier' in v) && 'supplierName' in v
      ? { ...v, supplier: (v as { supplierName: unknown }).supplierName }
      : v,
  z.object({
    supplier: z.string().trim().min(1, { error: 'is required' }).max(200),
    invoiceNumber: z.string().trim().max(100).nullish(),
    notes: z.string().trim().max(5000).nullish(),
    items: z.array(ImportLine).min(1, { error: 'at least one line is required' }).max(500),
  }),
);
export type ParsedData = z.infer<typeof ParsedData>;

export const ImportFromInvoiceJson = z.object({ parsedData: ParsedData }).openapi('ImportFromInvoice');

/** Text fields that may accompany a multipart import. */
export const ImportMultipartFields = z.object({
  supplier: z.string().trim().min(1).max(200).optional(),
  invoiceNumber: z.string().trim().max(100).optional(),
  notes: z.string().trim().max(5000).optional(),
});
export type ImportMultipartFields = z.infer<typeof ImportMultipartFields>;

const uploadedFile = (description: string) =>
  z.string().optional().openapi({ type: 'string', format: 'binary', description });

/** Documents the multipart forms of an import: an invoice PDF or the filled-in CSV template, with optional text fields. */
export const ImportFromInvoiceForm = ImportMultipartFields.extend({
  invoice: uploadedFile("an invoice PDF (at most 10 MB), read and stored as the order's invoice; or send csv"),
  csv: uploadedFile('the filled-in CSV template (GET /api/orders/import-template/csv); or send invoice'),
}).openapi('ImportFromInvoiceForm');

/** A lot received on an order line (issue 42). */
export const ReceivedLot = z
  .object({
    lotNumber: LotNumber,
    expiresOn: ExpiryDate.nullable()
      .optional()
      .openapi({
        description:
          "YYYY-MM-DD, not in the past; omitted or null: today plus the item's shelfLifeDays when set, else no expiry. " +
          'A lot the item already has must keep its date (409 otherwise)',
      }),
    quantity,
  })
  .openapi('ReceivedLot');

export const ReceiveOrder = z
  .object({
    receivedItems: z
      .array(
        z
          .object({
            orderItemId: IntId,
            receivedQuantity: quantity,
            addToInventory: z.boolean().default(true),
            // A line without an item, received into inventory, becomes a new item when it is given its SKU.
            sku: z.string().trim().min(1, { error: 'is required' }).max(100).optional().openapi({
              description:
                "a line without an item: the new item's SKU (unique); omitted: only the quantity is recorded",
            }),
            price: Price.optional().openapi({
              description:
                "the new item's sale price; omitted: the unit cost with the default markup (setting purchasing.defaultMarkup)",
            }),
            categoryId: IntId.optional().openapi({
              description: "the new item's category; omitted: the setting orders.defaultCategoryId",
            }),
            lots: z
              .array(ReceivedLot)
              .min(1, { error: 'at least one lot is required' })
              .max(100)
              .optional()
              .openapi({
                description:
                  'a lot-tracked item (issue 42): the lots that arrived, their quantities adding up to receivedQuantity; ' +
                  'required for such an item received into inventory',
              }),
          })
          .superRefine((line, ctx) => {
            if (!line.lots) return;
            const sum = line.lots.reduce((total, lot) => total.plus(lot.quantity), new D(0));
            if (!sum.eq(line.receivedQuantity)) {
              ctx.addIssue({
                code: 'custom',
                path: ['lots'],
                message: `quantities must add up to receivedQuantity (${new D(line.receivedQuantity).toString()}), not ${sum.toString()}`,
              });
            }
            const seen = new Set<string>();
            line.lots.forEach((lot, j) => {
              if (seen.has(lot.lotNumber))
                ctx.addIssue({ code: 'custom', path: ['lots', j, 'lotNumber'], message: 'is listed more than once' });
              seen.add(lot.lotNumber);
            });
          }),
      )
      .min(1, { error: 'at least one line is required' })
      .max(500),
  })
  .openapi('ReceiveOrder');
export type ReceiveOrder = z.infer<typeof ReceiveOrder>;

export const AddToInventory = z
  .object({
    categoryId: IntId.optional(),
    orderItemIds: z.array(IntId).min(1).max(500).optional(),
    items: z
      .array(
        z.object({
          orderItemId: IntId,
          sku: z.string().trim().min(1, { error: 'is required' }).max(100),
          price: Price.optional().openapi({
            description:
              'sale price; omitted: the unit cost with the default markup (setting purchasing.defaultMarkup)',
          }),
        }),
      )
      .min(1)
      .max(500)
      .optional()
      .openapi({
        description: "the lines to create items for, each with its new item's SKU (and price); instead of orderItemIds",
      }),
  })
  .refine((body) => !(body.items && body.orderItemIds), {
    error: 'send items or orderItemIds, not both',
    path: ['items'],
  })
  .openapi('AddToInventory');
export type AddToInventory = z.infer<typeof AddToInventory>;

export const OrderListQuery = z.object({
  status: z.enum(ORDER_STATUSES).optional(),
  supplierId: SupplierIdValue.optional(),
  limit: limitParam(500, 1000),
});

export const OrderLine = z
  .object({
    orderItemId: z.number().int(),
    itemId: z.number().int().nullable(),
    name: z.string(),
    sku: z.string().nullable(),
    quantity: z.number(),
    receivedQuantity: z.number(),
    outstandingQuantity: z.number(),
    unitCost: z.string().nullable().openapi({
      description: 'decimal string; null when the setting access.profile is strict and the caller is below manager',
    }),
    lineTotal: z.string().nullable().openapi({
      description: 'decimal string; null when the setting access.profile is strict and the caller is below manager',
    }),
  })
  .openapi('OrderLine');

export const Order = z
  .object({
    id: z.number().int(),
    orderId: z.string(),
    supplierId: z.string(),
    supplier: z.object({ id: z.string(), name: z.string() }),
    status: z.enum(ORDER_STATUSES),
    totalAmount: z.string().nullable().openapi({
      description:
        'decimal string, the sum of the lines at cost; null when the setting access.profile is strict and the caller is below manager',
    }),
    notes: z.string().nullable(),
    invoiceNumber: z.string().nullable(),
    hasInvoice: z.boolean(),
    itemCount: z.number().int(),
    createdBy: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    receivedAt: z.string().nullable(),
  })
  .openapi('Order');

export const OrderWithItems = Order.extend({ items: z.array(OrderLine) }).openapi('OrderWithItems');

export const OrderList = z.array(Order);

export const ImportFromInvoiceResult = z
  .object({
    success: z.boolean(),
    message: z.string(),
    order: OrderWithItems,
    supplierCreated: z.boolean(),
    matchedItems: z.number().int(),
    unmatchedItems: z.number().int(),
    extractedData: ExtractedData.optional(),
  })
  .openapi('ImportFromInvoiceResult');

export const ReceiveOrderResult = z
  .object({
    message: z.string(),
    order: OrderWithItems,
    stockMovements: z.array(
      z.object({ itemId: z.number().int(), quantity: z.number(), previousStock: z.number(), newStock: z.number() }),
    ),
  })
  .openapi('ReceiveOrderResult');

export const AddToInventoryResult = z
  .object({
    message: z.string(),
    createdItems: z.array(
      z.object({
        orderItemId: z.number().int(),
        item: z.object({ id: z.number().int(), name: z.string(), sku: z.string(), categoryId: z.number().int() }),
      }),
    ),
    order: OrderWithItems,
  })
  .openapi('AddToInventoryResult');

export const AttachInvoiceResult = z.object({
  success: z.boolean(),
  message: z.string(),
  invoice: StoredInvoice,
  extractedData: ExtractedData,
});

/** The CSV import template (text/csv). */
export const OrderImportCsvTemplate = z.string();

/** The bytes of an order's invoice (application/pdf). */
export const InvoicePdfFile = z.string().openapi({ type: 'string', format: 'binary' });
