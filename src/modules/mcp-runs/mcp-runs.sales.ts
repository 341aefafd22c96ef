import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { transaction } from '../../db/transaction';
import { HttpError } from '../../http/errors';
import { D } from '../../lib/money';
import { categoriesService, type CategoryRow } from '../categories/categories.service';
import { CreateCategory } from '../categories/categories.schemas';
import { AuthorisedUserBody, CreateChargeCode } from '../chargecodes/chargecodes.schemas';
import { SYSTEM_ACTOR } from '../audit/audit.actor';
import { chargeCodesService } from '../chargecodes/chargecodes.service';
import { CreateItem } from '../items/items.schemas';
import { itemsService, type ItemReadRow } from '../items/items.service';
import { SaveDraft } from '../sales/quotes.schemas';
import { quotesService, type QuoteRecord } from '../sales/quotes.service';
import { salesService, type SaleRecord } from '../sales/sales.service';
import type { UserRow } from '../users/users.service';
import type { Check } from './mcp-runs.system';

const DAY_MS = 86_400_000;
const OPENING_STOCK = '10';
const SOLD = '3';

/** Enough of an item's newest movements to hold the few this flow writes. */
const MOVEMENTS_READ = 10;

/** Whether a read answers 404 (what an owner's service says of a row that is not there). */
const isNotFound = (read: Promise<unknown>): Promise<boolean> =>
  read.then(
    () => false,
    (err: unknown) => {
      if (err instanceof HttpError && err.status === 404) return true;
      throw err;
    },
  );

function ensure(condition: boolean, problem: string): void {
  if (!condition) throw new Error(problem);
}

/**
 * The whole counter flow, quote to sale, through the services the API uses, inside one
 * transaction that is always rolled back: a temporary category, an item with opening stock, a
 * charge code, a draft quote, processing it, then the stock and the sale as they should be.
 * Each step is one test. Nothing is left behind except numbers drawn from the quote and sale
 * sequences (identifiers may have gaps by design). The actor is the account the MCP key acts for.
 */
export async function runSalesFlow(db: Knex, actor: UserRow, signal: AbortSignal): Promise<Check[]> {
  const tag = randomBytes(4).toString('hex').toUpperCase();
  const sku = `MCP-SALES-TEST-${tag}`;
  const code = `MCP-SALES-TEST-${tag}`;
  const checks: Check[] = [];
  let broken: string | undefined;

  /**
   * A step runs only while every earlier one passed (after a failure the transaction is unusable
   * anyway), except the check of the rollback, which runs whatever happened before it.
   */
  async function step(name: string, run: () => Promise<string>, always = false) {
    if (broken && !always) return checks.push({ name, passed: false, message: `not run: ${broken} failed` });
    try {
      signal.throwIfAborted();
      checks.push({ name, passed: true, message: await run() });
    } catch (err) {
      if (signal.aborted) throw err;
      broken = name;
      checks.push({ name, passed: false, message: (err as Error).message });
    }
  }

  const recipientName = `${actor.first_name} ${actor.last_name}`.trim() || actor.email;
  let category: CategoryRow | undefined;
  let item: ItemReadRow | undefined;
  let quote: QuoteRecord | undefined;
  let sale: SaleRecord | undefined;
  await transaction(db, { rollBack: true }, async (trx) => {
    await step('category_created', async () => {
      category = await categoriesService(trx).create(CreateCategory.parse({ name: `MCP sales test ${tag}` }));
      return `category ${category.id}`;
    });
    await step('item_created_with_stock', async () => {
      const input = CreateItem.parse({
        name: `MCP sales test item ${tag}`,
        sku,
        categoryId: category!.id,
        price: '2.50',
        currentStock: OPENING_STOCK,
      });
      item = await itemsService(trx).create(input, { ...SYSTEM_ACTOR, userId: actor.id, email: actor.email });
      const opening = (await itemsService(trx).movements(item.id, MOVEMENTS_READ)).find((m) => m.type === 'in');
      ensure(new D(item.current_stock).eq(OPENING_STOCK), `stock is ${item.current_stock}, expected ${OPENING_STOCK}`);
      ensure(
        opening !== undefined && new D(opening.quantity).eq(OPENING_STOCK),
        'no opening stock movement was written',
      );
      return `item ${item.id} (${sku}) with ${OPENING_STOCK} in stock and its opening movement`;
    });
    await step('charge_code_created', async () => {
      const now = Date.now();
      const input = CreateChargeCode.parse({
        code,
        title: 'MCP sales test',
        validFrom: new Date(now - DAY_MS).toISOString(),
        validUntil: new Date(now + 30 * DAY_MS).toISOString(),
      });
      const codes = chargeCodesService(trx);
      const auditActor = { ...SYSTEM_ACTOR, userId: actor.id, email: actor.email };
      await codes.create(input, auditActor);
      // the key's creator is its authorised user and the sale's recipient, so the run passes with chargeCodes.requireAuthorisedUser on
      await codes.addUser(code, AuthorisedUserBody.parse({ userName: recipientName, email: actor.email }), auditActor);
      return `charge code ${code}`;
    });
    await step('quote_saved', async () => {
      const input = SaveDraft.parse({
        chargeCode: code,
        items: [{ itemId: item!.id, quantity: SOLD }],
        sessionId: `mcp-sales-test-${tag}`,
      });
      quote = await quotesService(trx).saveDraft(actor, input);
      ensure(quote.lines.length === 1, `the quote has ${quote.lines.length} lines, expected 1`);
      return `quote ${quote.quote.quote_id} for ${SOLD} x ${sku}, total ${quote.quote.total_amount}`;
    });
    await step('quote_processed', async () => {
      sale = await salesService(trx).processQuote(actor, quote!.quote.id, {
        recipient: { deliveredTo: recipientName, deliveredToEmail: actor.email },
      });
      return `sale ${sale.sale.sale_id}`;
    });
    await step('stock_reduced', async () => {
      const now = await itemsService(trx).get(item!.id);
      const expected = new D(OPENING_STOCK).minus(SOLD);
      ensure(new D(now.current_stock).eq(expected), `stock is ${now.current_stock}, expected ${expected.toString()}`);
      const movement = (await itemsService(trx).movements(item!.id, MOVEMENTS_READ)).find(
        (m) => m.type === 'out' && m.reference_type === 'sale' && m.reference_id === sale!.sale.sale_id,
      );
      ensure(
        movement !== undefined && new D(movement.quantity).eq(new D(SOLD).negated()),
        "no stock movement of the sale's line",
      );
      return `stock ${OPENING_STOCK} -> ${expected.toString()}, movement recorded`;
    });
    await step('sale_recorded', async () => {
      const { sale: row } = await salesService(trx).get(sale!.sale.id);
      ensure(
        new D(row.total_amount).eq(quote!.quote.total_amount),
        `sale total ${row.total_amount}, quote total ${quote!.quote.total_amount}`,
      );
      ensure(
        row.quote_id === quote!.quote.quote_id && row.charge_code === code,
        'the sale does not name its quote and charge code',
      );
      ensure(await isNotFound(quotesService(trx).get(actor, quote!.quote.id)), 'the processed quote is still a draft');
      return `sale ${sale!.sale.sale_id} of ${row.total_amount}, the draft removed`;
    });
  });
  await step(
    'rolled_back',
    async () => {
      const left = [
        (await itemsService(db).idsBySku([sku])).size > 0 && 'the item',
        !(await isNotFound(chargeCodesService(db).find(code))) && 'the charge code',
        (await categoriesService(db).findByName(`MCP sales test ${tag}`)) && 'the category',
        sale && (await salesService(db).idsBySaleNumber([sale.sale.sale_id])).size > 0 && 'the sale',
      ].filter(Boolean);
      ensure(left.length === 0, `left behind after the rollback: ${left.join(', ')}`);
      return 'nothing left behind';
    },
    true,
  );
  return checks;
}
