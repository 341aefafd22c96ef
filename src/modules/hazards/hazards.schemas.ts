import { z } from 'zod';
import '../../http/openapi';

/** The nine GHS pictograms, by their GHS codes. */
export const PICTOGRAM_CODES = [
  'GHS01',
  'GHS02',
  'GHS03',
  'GHS04',
  'GHS05',
  'GHS06',
  'GHS07',
  'GHS08',
  'GHS09',
] as const;
export type PictogramCode = (typeof PICTOGRAM_CODES)[number];
export const SIGNAL_WORDS = ['Danger', 'Warning'] as const;
export type SignalWord = (typeof SIGNAL_WORDS)[number];

/** The most statements of one kind an item may carry (a safety data sheet rarely lists more than 20). */
export const MAX_STATEMENTS = 60;

/** An item's hazard data as the API answers it (issue 43); null on an item without any. */
export const Hazard = z
  .object({
    signalWord: z.enum(SIGNAL_WORDS).nullable(),
    pictograms: z.array(z.enum(PICTOGRAM_CODES)).openapi({ description: 'GHS01 to GHS09, in the order given' }),
    hStatements: z.array(z.string()).openapi({
      description: 'H and EUH codes (H225, H300+H310, H360Fd, EUH066), as GET /api/hazards/statements spells them',
    }),
    pStatements: z.array(z.string()).openapi({ description: 'P codes and official combinations (P303+P361+P353)' }),
    casNumber: z.string().nullable().openapi({ example: '64-17-5' }),
    unNumber: z.string().nullable().openapi({ description: 'four digits', example: '1170' }),
    storage: z.string().nullable().openapi({ description: 'storage instructions, free text' }),
  })
  .openapi('Hazard', {
    description:
      "The GHS/CLP hazard data of an item. The item's hazard is null when nothing is set (no signal word, no pictogram, no statement, " +
      'no CAS or UN number and no storage text). An item is hazardous (SDS alert, register) when it has a pictogram or an H statement.',
  });
export type Hazard = z.infer<typeof Hazard>;

const CODE_ERROR = 'must be an array of codes';
const optionalText = (max: number) =>
  z
    .string({ error: 'must be text' })
    .trim()
    .max(max, { error: `must be at most ${max} characters` })
    .nullish()
    .transform((v) => (v ? v : null));

/** An upper-cased, trimmed text; anything else as given (so that the enum names the field's error). */
const upperTrimmed = (v: unknown) => (typeof v === 'string' ? v.trim().toUpperCase() : v);

const Statements = z
  .array(
    z
      .string({ error: 'must be a statement code' })
      .trim()
      .min(1, { error: 'must be a statement code' })
      .max(40, { error: 'must be at most 40 characters' }),
    { error: CODE_ERROR },
  )
  .max(MAX_STATEMENTS, { error: `must have at most ${MAX_STATEMENTS} codes` })
  .default([]);

/**
 * The hazard data a manager sets on create or update: the whole object (a field left out is
 * cleared), or null for none. The statement codes and the CAS number's check digit are checked
 * afterwards (checkHazard), with the issue's own messages.
 */
export const HazardInput = z
  .object({
    signalWord: z
      .preprocess(
        (v) => (typeof v === 'string' ? (v.trim() === '' ? null : v.trim()) : v),
        z.enum(SIGNAL_WORDS, { error: 'must be Danger or Warning' }).nullish(),
      )
      .transform((v) => v ?? null),
    pictograms: z
      .array(z.preprocess(upperTrimmed, z.enum(PICTOGRAM_CODES, { error: 'must be one of GHS01 to GHS09' })), {
        error: 'must be an array of pictogram codes (GHS01 to GHS09)',
      })
      .max(PICTOGRAM_CODES.length, { error: 'must have at most 9 pictograms' })
      .default([]),
    hStatements: Statements,
    pStatements: Statements,
    casNumber: optionalText(20),
    unNumber: z
      .preprocess(
        (v) => (typeof v === 'string' ? v.trim() || null : v),
        z
          .string({ error: 'must be four digits' })
          .regex(/^[0-9]{4}$/, { error: 'must be four digits' })
          .nullish(),
      )
      .transform((v) => v ?? null),
    storage: optionalText(1000),
  })
  .openapi('HazardInput', {
    description:
      'signalWord Danger or Warning; pictograms GHS01 to GHS09; hStatements H and EUH codes, pStatements P codes or official ' +
      'combinations (codes as GET /api/hazards/statements lists them; case and spaces around + are forgiven); casNumber with a valid ' +
      'check digit; unNumber four digits; storage free text. A field left out is cleared. 400 {message: "Unknown hazard statement \'<code>\'"} ' +
      'or {message: "Invalid CAS number \'<cas>\'"}, each with errors [{field, message}] naming the field.',
  });
export type HazardInput = z.output<typeof HazardInput>;

/** GET /api/hazards/statements */
export const StatementText = z.object({
  code: z.string(),
  text: z.string(),
  withdrawn: z.literal(true).optional().openapi({
    description:
      'present on a code deleted from CLP or GHS since (P281, P304+P341, EUH001...): still accepted, as labels on the shelf carry it',
  }),
});
export const HazardStatements = z
  .object({
    source: z.string().openapi({ description: 'the regulations the texts are taken from' }),
    h: z
      .array(StatementText)
      .openapi({ description: 'hazard statements: H codes, their official combinations, and EUH codes' }),
    p: z
      .array(StatementText)
      .openapi({ description: 'precautionary statements: P codes and their official combinations' }),
    pictograms: z
      .array(z.object({ code: z.enum(PICTOGRAM_CODES), name: z.string(), image: z.string() }))
      .openapi({ description: 'the nine pictograms, their meaning and the path of their SVG' }),
  })
  .openapi('HazardStatements');
