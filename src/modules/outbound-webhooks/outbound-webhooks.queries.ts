import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { enqueueMessages } from '../outbox/outbox.queries';
import type { ReferenceCounters } from '../../db/references';
import { sql } from '../../db/sql';

/** The events an outbound webhook can subscribe to; any other name is refused. */
export const WEBHOOK_EVENTS = [
  'sale.created',
  'sale.refunded',
  'sale.paid',
  'stock.low',
  'order.received',
  'backup.failed',
  'stocktake.posted',
  // issue 33: a request entered the state (data: the request's API shape, GET /api/requests/{id})
  'request.submitted',
  'request.awaiting_approval',
  'request.approved',
  'request.rejected',
  'request.ready',
  'request.collected',
  'request.cancelled',
  // issue 42: the expiry digest found a lot newly expiring or expired (data: the lot with its item {id, sku, name})
  'lot.expiring',
  'lot.expired',
  // issue 42: a lot was recalled (data: the lot with its item, the message, the sales that took it, how many were emailed)
  'lot.recalled',
  'ping',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** What every delivery of an event posts: `data` in the API's own shape of the record. */
export type WebhookEventBody = { id: string; type: WebhookEvent; createdAt: string; data: unknown };

export type OutboundWebhookRow = {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  secret: string;
  active: boolean;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  failing_since: Date | null;
  deactivated_at: Date | null;
};

/**
 * How an event's record becomes its `data`: the owning module's present function, registered by
 * the composition root (registerWebhookPresenters, src/event-presenters.ts, which buildApp calls;
 * a service that publishes cannot import its presenter: the presenter imports the service's record
 * types, and an import cycle is refused). An event without one publishes data already in the API's
 * shape (stock.low: the low-stock list's item; backup.failed: the schedule's last run;
 * stocktake.posted: the post's result). Unregistered (a script that builds no app and registers
 * none), the record is the data as it is.
 */
const eventPresenters = new Map<string, (record: never) => unknown>();

export function registerEventPresenters(presenters: Partial<Record<WebhookEvent, (record: never) => unknown>>): void {
  for (const [type, present] of Object.entries(presenters)) eventPresenters.set(type, present);
}

/**
 * The active endpoints and their events, read once per transaction (a change that publishes
 * several events, a sale and its stock.low crossings, pays one indexed read).
 */
const subscribers = new WeakMap<Knex.Transaction, Promise<{ id: string; events: string[] }[]>>();
function subscribersIn(trx: Knex.Transaction): Promise<{ id: string; events: string[] }[]> {
  let read = subscribers.get(trx);
  if (!read) {
    // run now, once: a query builder awaited twice would run twice
    read = trx('outbound_webhooks')
      .where('active', true)
      .select<{ id: string; events: string[] }[]>('id', 'events')
      .then((rows) => rows);
    subscribers.set(trx, read);
  }
  return read;
}

/**
 * Queues the event for every active endpoint subscribed to it, in the caller's transaction: one
 * delivery per endpoint, each with its own id; the event's id is the same in all of them. `record`
 * is what the event's presenter takes (see registerEventPresenters), or a function reading it, called
 * only when some endpoint is subscribed (so an event nobody listens to costs one indexed read).
 */
export async function publishEvent(
  trx: Knex.Transaction,
  type: WebhookEvent,
  record: unknown,
  options: { onlyEndpoint?: string } = {},
): Promise<void> {
  await publishEvents(
    trx,
    type,
    async () => [typeof record === 'function' ? await (record as () => Promise<unknown>)() : record],
    options,
  );
}

/** publishEvent for several records (an event each), read by `records` only when some endpoint is subscribed. */
export async function publishEvents(
  trx: Knex.Transaction,
  type: WebhookEvent,
  records: () => Promise<unknown[]>,
  options: { onlyEndpoint?: string } = {},
): Promise<void> {
  const endpoints = (await subscribersIn(trx)).filter(
    (endpoint) => endpoint.events.includes(type) && (!options.onlyEndpoint || endpoint.id === options.onlyEndpoint),
  );
  if (endpoints.length === 0) return;
  const present = eventPresenters.get(type) as ((record: unknown) => unknown) | undefined;
  const createdAt = new Date().toISOString();
  const bodies: WebhookEventBody[] = (await records()).map((record) => ({
    id: randomUUID(),
    type,
    createdAt,
    data: present ? present(record) : record,
  }));
  await enqueueMessages(
    trx,
    bodies.flatMap((body) =>
      endpoints.map((endpoint: { id: string }) => ({
        channel: 'webhook' as const,
        kind: type,
        destination: endpoint.id,
        payload: body,
      })),
    ),
  );
}

/** The endpoint a delivery goes to; undefined once deleted. */
export function outboundWebhookById(db: Db, id: string): Promise<OutboundWebhookRow | undefined> {
  return db<OutboundWebhookRow>('outbound_webhooks').where({ id }).first();
}

/** A delivery went through: the endpoint is failing no more. */
export async function markEndpointDelivered(db: Db, id: string): Promise<void> {
  await db('outbound_webhooks').where({ id }).whereNotNull('failing_since').update({ failing_since: null });
}

/**
 * A delivery failed: the endpoint is failing since now unless it already was; when it has been for
 * `failingFor` ms it is set inactive, in the caller's transaction, and answered (once: the update
 * that deactivates it is the only one that returns it).
 */
export async function markEndpointFailing(
  trx: Knex.Transaction,
  id: string,
  failingForMs: number,
): Promise<OutboundWebhookRow | undefined> {
  await trx('outbound_webhooks').where({ id }).whereNull('failing_since').update({ failing_since: trx.fn.now() });
  const [deactivated] = await trx<OutboundWebhookRow>('outbound_webhooks')
    .where({ id, active: true })
    .andWhere('failing_since', '<=', trx.raw('now() - make_interval(secs => ?)', [failingForMs / 1000]))
    .update({ active: false, deactivated_at: trx.fn.now(), updated_at: trx.fn.now() })
    .returning('*');
  return deactivated;
}

/** The rows of webhook endpoints that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const outboundWebhooksReferences: ReferenceCounters = {
  users: [
    {
      table: 'outbound_webhooks',
      column: 'created_by',
      count: (id) => sql`SELECT count(*) FROM outbound_webhooks WHERE created_by = ${id}`,
    },
  ],
};
