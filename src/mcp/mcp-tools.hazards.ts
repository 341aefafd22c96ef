import type { Db } from '../db/knex';
import { hazardRegisterService } from '../modules/hazard-register/hazard-register.service';
import { presentHazard } from '../modules/hazards/hazards.present';
import { hazardView } from '../modules/hazards/hazards.service';
import { hazardOf } from '../modules/items/items.service';
import { mcpDataService } from '../modules/mcp-data/mcp-data.service';
import { presentSafetyDataSheetList } from '../modules/safety-data-sheets/safety-data-sheets.present';
import { safetyDataSheetsService } from '../modules/safety-data-sheets/safety-data-sheets.service';
import { requireCreatorRole, type AddTool, type ToolContext } from './mcp-tool-spec';
import {
  GetItemHazardsInput,
  GetItemHazardsOutput,
  ListHazardousItemsInput,
  ListHazardousItemsOutput,
} from './mcp-tools.hazards.schemas';

const READ = { readOnlyHint: true, openWorldHint: false } as const;

/**
 * Hazards and safety data sheets (issue 43), under the API's roles: an item's hazard data with the
 * statement texts and its sheet's versions for every key (GET /api/items/{id} and its /sds are any
 * staff member's), the hazard register while the key's creator is a manager (GET /api/reports/hazards).
 */
export function registerHazardTools(addTool: AddTool, db: Db, context: ToolContext) {
  addTool('get_item_hazards', {
    title: "An item's hazards and safety data sheets",
    description:
      "What are the hazards of X and where is its SDS? The item's signal word, GHS pictograms (with their meaning), H and P statements " +
      'with their standard English texts, CAS and UN numbers and storage, and every version of its safety data sheet newest first ' +
      '(the first is current), with the path that opens the current one. By itemId or exact SKU.',
    input: GetItemHazardsInput,
    output: GetItemHazardsOutput,
    annotations: READ,
    run: async ({ itemId, sku }) => {
      const row = await mcpDataService(db).item({ itemId, sku });
      const view = hazardView(presentHazard(hazardOf(row)));
      const versions = presentSafetyDataSheetList(await safetyDataSheetsService(db).list(row.id));
      return {
        item: { id: row.id, sku: row.sku, name: row.name },
        hazardous: view !== null && (view.pictograms.length > 0 || view.hStatements.length > 0),
        hazard: view && {
          signalWord: view.signalWord,
          pictograms: view.pictograms.map(({ code, name }) => ({ code, name })),
          hStatements: view.hStatements,
          pStatements: view.pStatements,
          casNumber: view.casNumber,
          unNumber: view.unNumber,
          storage: view.storage,
        },
        safetyDataSheets: versions,
        currentSdsPath: versions.length > 0 ? `/items/${row.id}/sds` : null,
      };
    },
  });

  addTool('list_hazardous_items', {
    title: 'The hazard register',
    description:
      'The hazard register, as GET /api/reports/hazards: every hazardous item (any pictogram or H statement) holding stock, with its ' +
      'pictograms, H statements and texts, CAS and UN numbers, storage, stock, lots holding stock and their expiry, and its current safety ' +
      'data sheet (state current, old or missing, and revision date). "Which hazardous items have no current SDS?" is sds due with ' +
      "includeWithoutStock. Needs the key's creator to be a manager.",
    input: ListHazardousItemsInput,
    output: ListHazardousItemsOutput,
    annotations: READ,
    run: async ({ sds, includeWithoutStock }) => {
      requireCreatorRole(context, 'manager', 'Hazard register reads');
      return hazardRegisterService(db).register({ sds, includeWithoutStock });
    },
  });
}
