import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { enqueueMessages } from '../outbox/outbox.queries';

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
  'ping',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** What every delivery of an event posts: `data` in the API's own shape of the record. */
export type WebhookEventBody = { id: string; type: WebhookEvent; createdAt: string; data: unknown };

/**
 * Queues the event for every active endpoint subscribed to it, in the caller's transaction: one
 * delivery per endpoint, each with its own id; the event's id is the same in all of them.
 */
export async function publishEvent(trx: Knex.Transaction, type: WebhookEvent, data: unknown): Promise<void> {
  const endpoints = await trx('outbound_webhooks')
    .select<{ id: string }[]>('id')
    .where('active', true)
    .andWhereRaw('events @> ARRAY[?]::text[]', [type]);
  if (endpoints.length === 0) return;
  const body: WebhookEventBody = { id: randomUUID(), type, createdAt: new Date().toISOString(), data };
  await enqueueMessages(
    trx,
    endpoints.map((endpoint) => ({ channel: 'webhook', kind: type, destination: endpoint.id, payload: body })),
  );
}
