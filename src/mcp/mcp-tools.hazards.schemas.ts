import { z } from 'zod';
import { HazardRegister, SDS_FILTERS } from '../modules/hazard-register/hazard-register.schemas';
import { PICTOGRAM_CODES, SIGNAL_WORDS } from '../modules/hazards/hazards.schemas';
import { SafetyDataSheetList } from '../modules/safety-data-sheets/safety-data-sheets.schemas';
import { itemRefFields, oneItemRef, oneItemRefIssue } from './mcp-tools.schemas';

/** The /mcp tools of hazards and safety data sheets (issue 43): the API's own answer schemas; the inputs as JSON values. */

const Statement = z.object({ code: z.string(), text: z.string() });

export const GetItemHazardsInput = z.object(itemRefFields).refine(oneItemRef, oneItemRefIssue);
export const GetItemHazardsOutput = z.object({
  item: z.object({ id: z.number().int(), sku: z.string(), name: z.string() }),
  hazardous: z.boolean().describe('any GHS pictogram or H statement'),
  hazard: z
    .object({
      signalWord: z.enum(SIGNAL_WORDS).nullable(),
      pictograms: z.array(z.object({ code: z.enum(PICTOGRAM_CODES), name: z.string() })),
      hStatements: z.array(Statement),
      pStatements: z.array(Statement),
      casNumber: z.string().nullable(),
      unNumber: z.string().nullable(),
      storage: z.string().nullable(),
    })
    .nullable()
    .describe("the item's GHS/CLP data with each statement's standard English text; null: none set"),
  safetyDataSheets: SafetyDataSheetList.describe(
    'every version of its safety data sheet, newest first (the first is current), as GET /api/items/{id}/sds',
  ),
  currentSdsPath: z
    .string()
    .nullable()
    .describe('where a signed-in person opens the current sheet (the path after the stores address); null: no sheet'),
});

export const ListHazardousItemsInput = z.object({
  sds: z
    .enum(SDS_FILTERS)
    .optional()
    .describe(
      'only the items whose current safety data sheet is current, old (revised more than safety.sdsReviewYears years ago), missing, or due (old or missing). Unset: all',
    ),
  includeWithoutStock: z
    .boolean()
    .default(false)
    .describe(
      'also the active hazardous items holding no stock (what the SDS alert counts); default: only those holding stock, as the register',
    ),
});
export const ListHazardousItemsOutput = HazardRegister;
