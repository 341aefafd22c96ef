import { z } from 'zod';
import '../../http/openapi';
import { decimalString, IntId, QueryBoolean } from '../../http/validate';
import { CategoryRef } from '../categories/categories.schemas';
import { MOVEMENT_TYPES, StockMovement } from '../stock-movements/stock-movements.schemas';
import { UserRef } from '../users/users.schemas';
import { limitParam, PageParam } from '../../http/pagination';
import { BARCODE_KINDS } from '../../lib/barcodes';
import { ExpiryDate, LotNumber, TRACKING_MODES } from '../lots/lots.schemas';
import { Hazard, HazardInput } from '../hazards/hazards.schemas';

export const Item = z
  .object({
    id: z.number().int(),
    name: z.string(),
    sku: z.string(),
    description: z.string().nullable(),
    categoryId: z.number().int(),
    category: CategoryRef,
    price: z.string().openapi({ description: 'decimal string with 2 places', example: '12.50' }),
    vatRate: z.string().openapi({
      description: "the item's effective VAT rate as a fraction with 4 places (the default rate when it has none)",
      example: '0.2000',
    }),
    usesDefaultVatRate: z
      .boolean()
      .openapi({ description: 'true when the item has no rate of its own and follows the default' }),
    currentStock: z.number(),
    minimumStock: z.number(),
    reorderQuantity: z.number().nullable().openapi({
      description:
        'how much to order above the minimum: the replenishment target is minimumStock + reorderQuantity; null = twice minimumStock',
    }),
    isActive: z.boolean(),
    createdBy: z.string().nullable().openapi({ description: 'id of the user who created the item' }),
    creator: UserRef.nullable().openapi({ description: 'the same user as {id, email, firstName, lastName}' }),
    createdAt: z.string().datetime(),
    updatedAt: z.string().datetime(),
    lastCountedAt: z
      .string()
      .datetime()
      .nullable()
      .openapi({ description: 'when a posted stocktake last counted the item; null: never (issue 31)' }),
    tracking: z.enum(TRACKING_MODES).openapi({
      description:
        'lot: the stock is kept in lots with expiry dates (GET /items/{id}/lots), sold first-expiry-first-out (issue 42)',
    }),
    shelfLifeDays: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'the expiry given to a received lot that has none: this many days after receipt' }),
    hazard: Hazard.nullable().openapi({
      description:
        'GHS/CLP hazard data (issue 43): {signalWord, pictograms, hStatements, pStatements, casNumber, unNumber, storage}; null when none of it is set',
    }),
    // issue 43: COSHH and restricted substances at the point of sale
    coshhRequired: z.boolean().openapi({
      description:
        "the item's own flag: a sale, quote processing or request holding it must carry coshhReference (a COSHH assessment's reference)",
    }),
    needsCoshhReference: z.boolean().openapi({
      description: 'read only: coshhRequired of the item or of its category, what the point of sale checks',
    }),
    restricted: z.boolean().openapi({
      description:
        "a restricted substance: only a manager or admin processes a sale holding it; a request holding it waits for a manager's approval",
    }),
  })
  .openapi('Item');
export type Item = z.infer<typeof Item>;

export const ItemList = z.object({ items: z.array(Item), total: z.number().int() }).openapi('ItemList');

export const ItemQuery = z.object({
  page: PageParam,
  limit: limitParam(10, 100),
  search: z
    .string()
    .trim()
    .max(200)
    .optional()
    .openapi({ description: 'case-insensitive substring of name, description or sku' }),
  categoryId: IntId.optional(),
  includeInactive: QueryBoolean.optional().openapi({
    type: 'boolean',
    description: 'managers and admins only: include soft-deleted items',
  }),
});
export type ItemQuery = z.infer<typeof ItemQuery>;

const MAX_MONEY = 9_999_999_999.99;
const MAX_STOCK = 999_999_999_999.99;
export const Price = decimalString({ places: 2, min: 0, max: MAX_MONEY }).openapi({ type: 'string', example: '12.50' });
export const StockLevel = decimalString({ places: 2, min: 0, max: MAX_STOCK }).openapi({ type: 'number', example: 10 });
/** Replenishment: the quantity ordered above the minimum (>= 0, 2 places); null = the target is twice the minimum. */
export const ReorderQuantity = decimalString({ places: 2, min: 0, max: MAX_STOCK }).openapi({
  type: 'number',
  example: 20,
  description: 'replenishment target = minimumStock + reorderQuantity; omitted or null = twice minimumStock',
});
export const VatRateValue = decimalString({ places: 4, min: 0, max: 1 }).openapi({ type: 'string', example: '0.2000' });
const Text = (max: number) => z.string().trim().min(1, { error: 'is required' }).max(max);
const PositiveInt = z
  .number({ error: 'must be a positive integer' })
  .int({ error: 'must be a positive integer' })
  .positive({ error: 'must be a positive integer' })
  .max(2_147_483_647);

const Tracking = z.enum(TRACKING_MODES, { error: `must be one of ${TRACKING_MODES.join(', ')}` }).openapi({
  description:
    'lot: stock in lots with expiry; turning it on puts the stock into the lot UNLOTTED, turning it off is a 409 while more than one lot holds stock. ' +
    'Either is one adjustment movement of 0 (the stock does not change) whose lots are the stock moved into or out of them',
});
const ShelfLifeDays = z
  .number({ error: 'must be a whole number of days' })
  .int({ error: 'must be a whole number of days' })
  .min(1, { error: 'must be at least 1' })
  .max(36500, { error: 'must be at most 36500' });

/** Issue 43: coshhRequired and restricted, set by managers. */
const HazardFlag = z.boolean({ error: 'must be a boolean' });

export const CreateItem = z
  .object({
    name: Text(200),
    sku: Text(100),
    description: z.string().trim().max(5000).nullish(),
    categoryId: PositiveInt,
    price: Price,
    vatRate: VatRateValue.nullish().openapi({
      description: 'own VAT rate; omitted or null = the default rate applies',
    }),
    currentStock: StockLevel.default('0'),
    minimumStock: StockLevel.default('0'),
    reorderQuantity: ReorderQuantity.nullish(),
    tracking: Tracking.default('none'),
    shelfLifeDays: ShelfLifeDays.nullish(),
    hazard: HazardInput.nullish().openapi({ description: 'hazard data (issue 43); omitted or null: none' }),
    coshhRequired: HazardFlag.optional().openapi({ description: 'default false' }),
    restricted: HazardFlag.optional().openapi({ description: 'default false' }),
  })
  .openapi('CreateItem');
export type CreateItem = z.infer<typeof CreateItem>;

export const UpdateItem = z
  .object({
    name: Text(200),
    sku: Text(100),
    description: z.string().trim().max(5000).nullable(),
    categoryId: PositiveInt,
    price: Price,
    vatRate: VatRateValue.nullable(),
    currentStock: StockLevel,
    minimumStock: StockLevel,
    reorderQuantity: ReorderQuantity.nullable(),
    isActive: z.boolean(),
    tracking: Tracking,
    shelfLifeDays: ShelfLifeDays.nullable(),
    hazard: HazardInput.nullable().openapi({
      description: 'replaces the whole hazard data (a field left out is cleared); null clears it',
    }),
    coshhRequired: HazardFlag,
    restricted: HazardFlag,
    stockReason: z
      .string()
      .trim()
      .max(500)
      .openapi({ description: 'reason recorded on the adjustment movement when currentStock changes' }),
  })
  .partial()
  .openapi('UpdateItem');
export type UpdateItem = z.infer<typeof UpdateItem>;

export const StockChangeBody = z
  .object({
    quantity: StockLevel.openapi({ description: 'in/out: how many (> 0); adjustment: the new stock level (>= 0)' }),
    type: z.enum(MOVEMENT_TYPES),
    reason: z.string().trim().max(500).optional(),
    lotNumber: LotNumber.optional().openapi({
      description: 'a lot-tracked item: the lot (in: added to, created when new; out and adjustment: required)',
    }),
    expiresOn: ExpiryDate.nullable().optional().openapi({
      description:
        "in, a new lot: its expiry (omitted: the item's shelf life from today, or none); may be past: the lot is expired at once",
    }),
  })
  .openapi('StockChange');
export type StockChangeBody = z.infer<typeof StockChangeBody>;

export const ItemDeletionCheck = z
  .object({
    canDelete: z.boolean(),
    reasons: z
      .array(z.string())
      .openapi({ description: 'why a safe delete would be refused; empty when it would succeed' }),
  })
  .openapi('ItemDeletionCheck');
export type ItemDeletionCheck = z.infer<typeof ItemDeletionCheck>;

/** A permanent delete refused while records reference the item. */
export const ItemDeleteRefused = z.object({ message: z.string(), reasons: z.array(z.string()) });

export const StockChangeResult = z
  .object({ message: z.string(), item: Item, movement: StockMovement })
  .openapi('StockChangeResult');

// ---- bulk -------------------------------------------------------------------------

export const MAX_BULK_IDS = 1000;
export const ItemIds = z
  .array(PositiveInt, { error: 'must be an array of positive integers' })
  .min(1, { error: 'must not be empty' })
  .max(MAX_BULK_IDS, { error: `must not have more than ${MAX_BULK_IDS} ids` });

export const BulkIds = z.object({ itemIds: ItemIds }).openapi('BulkItemIds');
export const BulkAddNote = z.object({ itemIds: ItemIds, noteText: Text(5000) }).openapi('BulkAddNote');
export const BulkVatRate = z.object({ itemIds: ItemIds, vatRate: VatRateValue }).openapi('BulkChangeVatRate');
export const BulkCategory = z.object({ itemIds: ItemIds, categoryId: PositiveInt }).openapi('BulkChangeCategory');
export const BulkExport = z
  .object({
    itemIds: ItemIds.optional(),
    all: z
      .boolean()
      .optional()
      .openapi({ description: 'export every item (active ones unless includeInactive) instead of itemIds' }),
    includeInactive: z.boolean().optional(),
    format: z.enum(['csv', 'xlsx']).default('xlsx'),
  })
  .refine((v) => v.itemIds !== undefined || v.all === true, {
    error: 'itemIds is required (or all: true)',
    path: ['itemIds'],
  })
  .openapi('BulkExport');
export type BulkExport = z.infer<typeof BulkExport>;

/** The bytes of an export (CSV or XLSX). */
export const ItemsExportFile = z.string().openapi({ format: 'binary' });

export const BulkResult = z.object({ success: z.boolean(), message: z.string() }).openapi('BulkResult');

export const MAX_IMPORT_ITEMS = 10_000;
export const BulkImport = z
  .object({
    items: z
      .array(z.unknown(), { error: 'must be an array of items' })
      .min(1, { error: 'must not be empty' })
      .max(MAX_IMPORT_ITEMS, { error: `must not have more than ${MAX_IMPORT_ITEMS} items` }),
  })
  .openapi('BulkImport', {
    description:
      'items: [{name, sku, description?, categoryName (case-insensitive exact match), price, currentStock, minimumStock? (default 0), reorderQuantity? (default none: the replenishment target is twice the minimum), barcodes? (an array of codes, or one text of codes joined by "|" as the export writes them; each checked as POST /api/items/{id}/barcodes checks it, and unique across every item\'s SKU and barcodes and this import), tracking? (none or lot, default none), shelfLifeDays? (1 to 36500), lotNumber? and expiresOn? (YYYY-MM-DD, may be past; only for tracking lot: the lot the opening stock goes into, UNLOTTED with no expiry when no lotNumber is given), signalWord?, pictograms?, hStatements?, pStatements? (arrays of codes, or texts of codes joined by "|", "," or ";"), casNumber?, unNumber?, hazardStorage? (issue 43: the item\'s hazard, checked as POST /api/items checks it), coshhRequired? and restricted? (true/false, yes/no or 1/0; default false)}]',
  });
export const ImportResult = z
  .object({ successful: z.number().int(), failed: z.number().int(), errors: z.array(z.string()) })
  .openapi('ImportResult');
export type ImportResult = z.infer<typeof ImportResult>;

const FLAG_WORDS: Record<string, boolean> = { true: true, yes: true, '1': true, false: false, no: false, '0': false };
const ImportFlag = z.preprocess(
  (v) => {
    if (typeof v === 'number') return v === 1 ? true : v === 0 ? false : v;
    if (typeof v !== 'string') return v;
    const word = v.trim().toLowerCase();
    return word === '' ? undefined : (FLAG_WORDS[word] ?? v);
  },
  z.boolean({ error: 'must be yes or no (true/false)' }).nullish(),
);

export const ImportRow = z.object({
  name: z
    .string({ error: 'must be text' })
    .trim()
    .min(1, { error: 'is required' })
    .max(200, { error: 'is too long (max 200)' }),
  sku: z
    .string({ error: 'must be text' })
    .trim()
    .min(1, { error: 'is required' })
    .max(100, { error: 'is too long (max 100)' }),
  description: z.string({ error: 'must be text' }).trim().max(5000, { error: 'is too long (max 5000)' }).nullish(),
  categoryName: z.string({ error: 'must be text' }).trim().min(1, { error: 'is required' }),
  price: decimalString({ places: 2, min: 0, max: MAX_MONEY }),
  currentStock: decimalString({ places: 2, min: 0, max: MAX_STOCK }),
  minimumStock: decimalString({ places: 2, min: 0, max: MAX_STOCK }).nullish(),
  reorderQuantity: decimalString({ places: 2, min: 0, max: MAX_STOCK }).nullish(),
  // issue 42: a blank cell is no value; tracking in any case, shelf life and expiry as a spreadsheet gives them
  tracking: z.preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() || undefined : v),
    z.enum(TRACKING_MODES, { error: `must be one of ${TRACKING_MODES.join(', ')}` }).nullish(),
  ),
  shelfLifeDays: z.preprocess(
    (v) => (typeof v === 'string' ? (v.trim() === '' ? undefined : /^\s*\d+\s*$/.test(v) ? Number(v) : v) : v),
    ShelfLifeDays.nullish(),
  ),
  lotNumber: z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), LotNumber.nullish()),
  expiresOn: z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), ExpiryDate.nullish()),
  // issue 43: yes/no as a spreadsheet gives them (true/false, yes/no, 1/0 in any case; blank: no value, default false)
  coshhRequired: ImportFlag,
  restricted: ImportFlag,
});

// ---- orders of an item ------------------------------------------------------------

export const ItemOrderHistory = z
  .object({
    orders: z.array(
      z.object({
        orderId: z.string(),
        orderDate: z.string(),
        supplier: z.string(),
        quantity: z.number(),
        receivedQuantity: z.number(),
        unitCost: z
          .number()
          .nullable()
          .openapi({ description: 'null when the setting access.profile is strict and the caller is below manager' }),
        status: z.string(),
      }),
    ),
  })
  .openapi('ItemOrderHistory');

// ---- barcodes (issue 31) --------------------------------------------------------

export const BarcodeKindEnum = z.enum(BARCODE_KINDS).openapi({
  description:
    'ean13 (13 digits), upca (12 digits), gtin14 (14 digits): each with a valid GS1 check digit; code128: printable ASCII; other: anything else',
});

export const Barcode = z
  .object({
    id: z.number().int(),
    code: z.string().openapi({ description: 'the code as entered (a GS1 string is stored as the GTIN-14 it carries)' }),
    kind: BarcodeKindEnum,
    note: z.string().nullable(),
    createdAt: z.string().datetime(),
  })
  .openapi('Barcode');
export type Barcode = z.infer<typeof Barcode>;

export const BarcodeList = z.array(Barcode).openapi('BarcodeList');

export const NewBarcode = z
  .object({
    code: z
      .string({ error: 'is required' })
      .min(1, { error: 'is required' })
      .max(500, { error: 'is too long (max 500)' })
      .openapi({
        description:
          'the code, at most 100 characters once trimmed; a scanned GS1 element string or Digital Link is stored as the GTIN-14 of its AI (01)',
        example: '4006381333931',
      }),
    kind: BarcodeKindEnum.optional().openapi({ description: 'guessed from the code when absent' }),
    note: z.string().trim().max(500, { error: 'is too long (max 500)' }).nullish(),
  })
  .openapi('NewBarcode');
export type NewBarcode = z.infer<typeof NewBarcode>;

export const BarcodeParams = z.object({ id: IntId, barcodeId: IntId });

export const LookupQuery = z.object({
  code: z
    .string({ error: 'is required' })
    .min(1, { error: 'is required' })
    .max(500, { error: 'is too long (max 500)' })
    .openapi({
      description:
        'the scanned or typed text: a SKU (any case), a barcode, a UPC-A or its EAN-13 form, or a GS1 element string carrying (01)<GTIN> (bracketed or with the GS separator, optionally after a symbology identifier such as ]d2)',
      example: '(01)09501101530003(17)251231',
    }),
});

export const ItemDetail = Item.extend({
  barcodes: z
    .array(z.string())
    .openapi({ description: "the item's barcodes (codes only, oldest first); see GET /api/items/{id}/barcodes" }),
}).openapi('ItemDetail');
export type ItemDetail = z.infer<typeof ItemDetail>;

/** GET /items/lookup: the item, and the lot a GS1 scan carries (issue 42). */
export const LookupResult = ItemDetail.extend({
  scanned: z
    .object({
      lotNumber: z.string().openapi({ description: "the scan's AI (10)" }),
      expiresOn: z
        .string()
        .nullable()
        .openapi({ description: "the scan's AI (17) as YYYY-MM-DD (day 00: the month's last day); null when absent" }),
      lotId: z.number().int().nullable().openapi({
        description: "the item's lot of that number (see GET /api/items/{id}/lots); null when the lot is new",
      }),
    })
    .nullable()
    .openapi({
      description:
        'the lot a GS1 element string with a valid (01) carries in (10), with its (17) expiry; null when the code carries no lot ' +
        '(a SKU, a plain barcode, a GS1 string without (10) or with an invalid element)',
    }),
}).openapi('LookupResult');
export type LookupResult = z.infer<typeof LookupResult>;
