import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../src/db/knex';
import { registerWebhookPresenters } from '../src/event-presenters';
import { presentSale } from '../src/modules/sales/sales.present';
import { CreateSale } from '../src/modules/sales/sales.schemas';
import { salesService } from '../src/modules/sales/sales.service';
import { testDatabase } from './helpers/app';
import { buildItem, buildUser } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';

// A file of the api-fresh project (vitest.config.ts): its modules are loaded afresh, so no other
// file's app or router has been built in this process. Only the composition root's registration runs.
let db: Knex;
let drop: () => Promise<void>;

beforeAll(async () => {
  const clone = await testDatabase();
  db = createDb(clone.databaseUrl, 2);
  drop = clone.drop;
});
afterAll(async () => {
  await db.destroy();
  await drop();
});

describe('webhook event presenters', () => {
  it('a sale.created payload is the sale as GET /api/sales/{id} answers it, with no app or router built', async () => {
    registerWebhookPresenters();
    const [endpoint] = await db('outbound_webhooks')
      .insert({ url: 'https://hooks.example.org/stores', events: ['sale.created'], secret: 'whsec-test-0123456789' })
      .returning('id');
    const user = await buildUser(db, { role: 'user' });
    const item = await buildItem(db, { currentStock: 5 });
    const code = await buildChargeCode(db);

    const sale = await salesService(db).create(
      user,
      CreateSale.parse({ chargeCode: code.code, items: [{ itemId: item.id, quantity: 2 }] }),
    );

    const messages = await db('outbox_messages').where({ kind: 'sale.created' }).select('destination', 'payload');
    expect(messages).toHaveLength(1);
    expect(messages[0].destination).toBe(endpoint.id);
    expect(messages[0].payload).toMatchObject({ type: 'sale.created', data: { saleId: sale.sale.sale_id } });
    expect(messages[0].payload.data).toEqual(JSON.parse(JSON.stringify(presentSale(sale))));
  });
});
