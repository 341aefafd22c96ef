import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { buildUser } from '../helpers/factories';
import { buildStockedItem } from '../helpers/inventory-factories';
import { buildChargeCode } from '../helpers/sales-factories';
import type { Client } from '../helpers/server-process';
import { TestSmtp } from '../helpers/smtp';
import { startTopology, type Topology } from '../helpers/topology';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver';

export type Store = { manager: { email: string }; admin: { email: string }; chargeCode: string; itemIds: number[] };

/** A manager, an admin, a valid charge code and `items` items stocked through the ledger. */
export async function seedStore(db: Knex, items = 10, stock = 100_000): Promise<Store> {
  const [manager, admin] = await Promise.all([buildUser(db, { role: 'manager' }), buildUser(db, { role: 'admin' })]);
  const code = await buildChargeCode(db);
  const itemIds: number[] = [];
  for (let i = 0; i < items; i += 1) itemIds.push((await buildStockedItem(db, stock)).id);
  return { manager, admin, chargeCode: code.code, itemIds };
}

export const sessionId = () => `faults-${randomBytes(6).toString('hex')}`;

/** Saves a draft quote of two lines and processes it: the status of each step. */
export async function sellThroughQuote(client: Client, store: Store, itemA: number, itemB: number) {
  const saved = await client.post('/api/sales/quotes', {
    chargeCode: store.chargeCode,
    sessionId: sessionId(),
    items: [
      { itemId: itemA, quantity: 1 },
      { itemId: itemB, quantity: 2 },
    ],
  });
  if (saved.status !== 200) return { step: 'save' as const, answer: saved };
  const id = (saved.body as { quote: { id: number } }).quote.id;
  return { step: 'process' as const, quoteId: id, answer: await client.post(`/api/sales/quotes/${id}/process`, {}) };
}

/** The reference topology as the fault tests drive it: its instances email a test SMTP server and post webhooks to a receiver. */
export type OutboxTopology = { topology: Topology; smtp: TestSmtp; receiver: Receiver; store: Store };

/**
 * The reference topology with a synchronous replica and `instances` instances, sending email and
 * webhooks to servers of the test's own, and a store of `items` items seeded on the primary.
 */
export async function startOutboxTopology({
  instances,
  items,
  stock,
}: {
  instances?: number;
  items: number;
  stock?: number;
}): Promise<OutboxTopology> {
  const smtp = await TestSmtp.start();
  const receiver = await startReceiver();
  const topology = await startTopology({
    synchronousReplica: true,
    instances,
    env: {
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Stores <stores@example.ac.uk>',
      OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: '127.0.0.1',
    },
  });
  return { topology, smtp, receiver, store: await seedStore(topology.primary.db, items, stock) };
}

/** Stops what startOutboxTopology started (any part that did start). */
export async function closeOutboxTopology(started: Partial<OutboxTopology>): Promise<void> {
  await started.topology?.close();
  await started.receiver?.close();
  await started.smtp?.stop();
}
