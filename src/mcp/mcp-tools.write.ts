import { randomUUID } from 'node:crypto';
import type { Db } from '../db/knex';
import { presentStockChange } from '../modules/items/items.present';
import { itemsService } from '../modules/items/items.service';
import { presentDraftSaved } from '../modules/sales/quotes.present';
import { quotesService } from '../modules/sales/quotes.service';
import { mcpDataService } from '../modules/mcp-data/mcp-data.service';
import { requireCreatorRole, type AddTool, type ToolContext } from './mcp-tool-spec';
import {
  CreateDraftQuoteInput,
  CreateDraftQuoteOutput,
  RecordStockChangeInput,
  RecordStockChangeOutput,
} from './mcp-tools.schemas';

/**
 * The tools of a key with the write scope. They act as the key's creator (an active account, or the
 * key would not have opened the request), through the same services as the API: the stock ledger
 * via the items service, the draft quotes service.
 */
export function registerWriteTools(addTool: AddTool, db: Db, context: ToolContext) {
  const data = mcpDataService(db);
  const { key } = context;
  const actor = key.creator;

  addTool('record_stock_change', {
    title: 'Record a stock change',
    description:
      "Changes an item's stock through the stock ledger, as POST /api/items/{id}/stock does: in (received), out (taken out) or adjustment " +
      "(the counted level). The movement is attributed to the key's creator, its reason followed by the key's name. Refused below zero.",
    input: RecordStockChangeInput,
    output: RecordStockChangeOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    run: async ({ type, quantity, reason, ...ref }) => {
      requireCreatorRole(context, 'manager', 'Stock changes');
      const [itemId] = await data.itemIdsFor([ref]);
      const { item, movement } = await itemsService(db).changeStock(
        itemId,
        { type, quantity, reason: `${reason} (MCP key '${key.name}')` },
        actor.id,
      );
      return presentStockChange(item, movement);
    },
  });

  addTool('create_draft_quote', {
    title: 'Create a draft quote',
    description:
      "Saves a new draft quote for the key's creator (items by id or SKU), with the same checks as the counter: the charge code must be valid " +
      'now and allow every line, items must be active. Lines are priced from the items now. Nothing is sold and no stock moves: a person ' +
      'processes the draft (it is listed by GET /api/sales/quotes).',
    input: CreateDraftQuoteInput,
    output: CreateDraftQuoteOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: async ({ chargeCode, lines, vatApplied, customerNotes }) => {
      const itemIds = await data.itemIdsFor(lines);
      const draft = await quotesService(db).saveDraft(actor, {
        chargeCode,
        items: lines.map((line, i) => ({ itemId: itemIds[i], quantity: line.quantity })),
        vatApplied,
        customerNotes,
        // one draft per (user, session): a session of its own makes each call a new draft instead of replacing the last one
        sessionId: `mcp-key-${key.id}-${randomUUID()}`,
      });
      return presentDraftSaved(draft);
    },
  });
}
