import { z } from 'zod';
import '../../http/openapi';
import { IntId } from '../../http/validate';

/** A safety data sheet's PDF may be this large (a larger upload is 413). */
export const MAX_SDS_BYTES = 20 * 1024 * 1024;

/** The stores' today (UK), YYYY-MM-DD. */
export const storesToday = (now: Date = new Date()): string =>
  new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London' }).format(now);

const isCalendarDate = (v: string) => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) return false;
  const date = new Date(`${v}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(v);
};

/** A calendar date YYYY-MM-DD (2026-02-30 is none). */
export const CalendarDate = z
  .string({ error: (issue) => (issue.input === undefined ? 'is required (YYYY-MM-DD)' : 'must be a date YYYY-MM-DD') })
  .trim()
  .refine(isCalendarDate, { error: 'must be a date YYYY-MM-DD' })
  .openapi({ example: '2025-06-30' });

/** A language tag (BCP 47's common forms: en, de, en-GB, zh-Hant), its language in lower case. */
const Language = z
  .string({ error: 'must be a language code such as en or en-GB' })
  .trim()
  .max(35, { error: 'must be a language code such as en or en-GB' })
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, { error: 'must be a language code such as en or en-GB' })
  .transform((v) => v.replace(/^[A-Za-z]+/, (language) => language.toLowerCase()));

/** A form's empty field is no value. */
const blankIsAbsent = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

/** The text fields of POST /api/items/{id}/sds (multipart/form-data, beside the file). */
export const SdsUploadFields = z.object({
  revisionDate: CalendarDate.refine((v) => v <= storesToday(), { error: 'must not be after today' }),
  language: z.preprocess(blankIsAbsent, Language.optional()).transform((v) => v ?? 'en'),
  supplierId: z.preprocess(
    blankIsAbsent,
    z.string({ error: 'must be a supplier id' }).trim().max(200, { error: 'must be a supplier id' }).optional(),
  ),
});
export type SdsUploadFields = z.infer<typeof SdsUploadFields>;

/** Documents the multipart body. */
export const SdsUploadBody = z
  .object({
    file: z
      .string()
      .openapi({ type: 'string', format: 'binary', description: 'the safety data sheet, a PDF of at most 20 MB' }),
    revisionDate: z.string().openapi({ description: "the sheet's revision date, YYYY-MM-DD, not after today" }),
    language: z.string().optional().openapi({ description: 'its language (en, de, en-GB, ...); default en' }),
    supplierId: z
      .string()
      .optional()
      .openapi({ description: 'the supplier whose sheet it is (an existing supplier id)' }),
  })
  .openapi('SafetyDataSheetUpload');

export const SdsParams = z.object({ id: IntId });
export const SdsVersionParams = z.object({ id: IntId, sdsId: IntId });

export const SdsListQuery = z.object({
  on: CalendarDate.optional().openapi({
    description:
      "an auditor's date: only the versions whose revision date is on or before it, the one current on that date (the latest revision date, then the latest upload) marked current",
  }),
  language: z
    .string()
    .trim()
    .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, { error: 'must be a language code such as en or en-GB' })
    .optional()
    .openapi({ description: 'only the versions in this language' }),
});
export type SdsListQuery = z.infer<typeof SdsListQuery>;

export const SdsCurrentQuery = SdsListQuery.pick({ language: true });

export const SafetyDataSheet = z
  .object({
    id: z.number().int(),
    itemId: z.number().int(),
    revisionDate: z.string().openapi({ description: 'YYYY-MM-DD, as given' }),
    language: z.string(),
    supplierId: z.string().nullable(),
    sizeBytes: z.number().int(),
    uploadedBy: z.string().nullable().openapi({ description: "the uploader's user id; null once that user is gone" }),
    uploadedAt: z.string().openapi({ description: 'ISO 8601 UTC' }),
  })
  .openapi('SafetyDataSheet');

export const SafetyDataSheetVersion = SafetyDataSheet.extend({
  current: z.boolean().openapi({
    description:
      'the version current today, or on `on` when given: the latest revision date (then the latest upload); at most one is',
  }),
}).openapi('SafetyDataSheetVersion');
export const SafetyDataSheetList = z.array(SafetyDataSheetVersion);

export const SdsPdfFile = z.string().openapi({ type: 'string', format: 'binary' });
