import type { Db } from '../db/knex';
import { presentListedLot, presentLotsPage, presentLotTrace } from '../modules/lot-control/lot-control.present';
import { lotControlService } from '../modules/lot-control/lot-control.service';
import { mcpDataService } from '../modules/mcp-data/mcp-data.service';
import { requireCreatorRole, type AddTool, type ToolContext } from './mcp-tool-spec';
import {
  ListLotsInput,
  ListLotsOutput,
  QuarantineLotInput,
  QuarantineLotOutput,
  TraceLotInput,
  TraceLotOutput,
} from './mcp-tools.lots.schemas';

const READ = { readOnlyHint: true, openWorldHint: false } as const;

/**
 * Lots (issue 42), through the same service as the API and with its rules: the lots list for every
 * key (any member of staff reads it), a lot's trace while the key's creator is a manager, and
 * quarantine for a key with the write scope whose creator is a manager, audited as the key.
 */
export function registerLotTools(addTool: AddTool, db: Db, context: ToolContext) {
  const lots = lotControlService(db);

  addTool('list_lots', {
    title: 'Lots to act on',
    description:
      'Lots holding stock that are expiring (within the warning days of their expiry), expired or quarantined, soonest expiry first, ' +
      'each with its item {id, sku, name}, as GET /api/lots: "which lots of X expire soon?" is status expiring and the item. Paged.',
    input: ListLotsInput,
    output: ListLotsOutput,
    annotations: READ,
    run: async ({ status, itemId, sku, page, limit }) => {
      const id = sku === undefined ? itemId : (await mcpDataService(db).itemIdsFor([{ sku }]))[0];
      return presentLotsPage(await lots.list({ status, itemId: id, page, limit }), page, limit);
    },
  });

  addTool('trace_lot', {
    title: 'Who got a lot',
    description:
      "A lot's trace, as GET /api/lots/{id}/trace: the orders it was received on, each sale that took some of it (net of refunds) with " +
      "its charge code and recipient, every movement of the lot, and what remains. Needs the key's creator to be a manager.",
    input: TraceLotInput,
    output: TraceLotOutput,
    annotations: READ,
    run: async ({ lotId }) => {
      requireCreatorRole(context, 'manager', 'Lot traces');
      return presentLotTrace(await lots.trace(lotId));
    },
  });

  if (!context.canWrite) return;

  addTool('quarantine_lot', {
    title: 'Quarantine a lot',
    description:
      'Holds a lot back, as POST /api/lots/{id}/quarantine: no sale takes it until a manager releases it. Audited as the key. ' +
      "Needs the key's creator to be a manager.",
    input: QuarantineLotInput,
    output: QuarantineLotOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: async ({ lotId, reason }) => {
      requireCreatorRole(context, 'manager', 'Quarantining lots');
      return { lot: presentListedLot(await lots.quarantine(lotId, { reason }, context.actor)) };
    },
  });
}
