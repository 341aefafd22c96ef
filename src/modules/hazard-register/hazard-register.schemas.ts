import { z } from 'zod';
import '../../http/openapi';
import { PICTOGRAM_CODES, SIGNAL_WORDS } from '../hazards/hazards.schemas';

/** What a register row's safety data sheet is: current, older than safety.sdsReviewYears, or missing. */
export const SDS_STATES = ['current', 'old', 'missing'] as const;
export type SdsState = (typeof SDS_STATES)[number];
/** The sds filter: one state, or `due` (old or missing: what the sds_missing_or_old alert counts). */
export const SDS_FILTERS = [...SDS_STATES, 'due'] as const;
export type SdsFilter = (typeof SDS_FILTERS)[number];

export const HazardRegisterQuery = z.object({
  format: z.enum(['json', 'csv']).default('json').openapi({ description: 'json (default) or csv' }),
  sds: z.enum(SDS_FILTERS).optional().openapi({
    description:
      'only the items whose safety data sheet is current, old (revised more than safety.sdsReviewYears years ago), missing, or due (old or missing); unset: all',
  }),
});
export type HazardRegisterQuery = z.infer<typeof HazardRegisterQuery>;

const Statement = z.object({ code: z.string(), text: z.string() });

export const HazardRegisterLot = z.object({
  lotNumber: z.string(),
  quantity: z.string().openapi({ description: 'what the lot holds, a decimal as text' }),
  expiresOn: z.string().nullable().openapi({ description: 'YYYY-MM-DD; null: the lot does not expire' }),
  quarantined: z.boolean(),
});

export const HazardRegisterItem = z
  .object({
    id: z.number().int(),
    sku: z.string(),
    name: z.string(),
    isActive: z.boolean(),
    signalWord: z.enum(SIGNAL_WORDS).nullable(),
    pictograms: z.array(z.object({ code: z.enum(PICTOGRAM_CODES), name: z.string() })),
    hStatements: z.array(Statement).openapi({ description: 'H and EUH codes with their standard English texts' }),
    casNumber: z.string().nullable(),
    unNumber: z.string().nullable(),
    storage: z.string().nullable(),
    stock: z.string().openapi({ description: 'current stock, a decimal as text' }),
    lots: z
      .array(HazardRegisterLot)
      .openapi({ description: 'the lots holding stock, soonest expiry first (none for an item not tracked by lot)' }),
    sds: z.object({
      state: z.enum(SDS_STATES),
      revisionDate: z
        .string()
        .nullable()
        .openapi({ description: "the current sheet's revision date, YYYY-MM-DD; null: none" }),
      language: z.string().nullable(),
    }),
  })
  .openapi('HazardRegisterItem');
export type HazardRegisterItem = z.infer<typeof HazardRegisterItem>;

export const HazardRegister = z
  .object({
    generatedAt: z.string().openapi({ description: 'ISO 8601 timestamp' }),
    sdsReviewYears: z.number().int().openapi({ description: 'the setting safety.sdsReviewYears (unset: 5)' }),
    items: z.array(HazardRegisterItem),
  })
  .openapi('HazardRegister');
export type HazardRegister = z.infer<typeof HazardRegister>;

/** The register CSV's columns, in order. */
export const HAZARD_REGISTER_CSV_COLUMNS = [
  'SKU',
  'Item',
  'Signal Word',
  'Pictograms',
  'H Statements',
  'CAS Number',
  'UN Number',
  'Stock',
  'Lots',
  'SDS Revision Date',
  'SDS Status',
  'Storage',
];
