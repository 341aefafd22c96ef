import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { allQueries, transaction } from '../../db/transaction';
import { BadRequest, Conflict, NotFound } from '../../http/errors';
import type { Actor } from '../audit/audit.actor';
import { auditAs } from '../audit/audit.service';
import {
  countOutboxMessages,
  enqueueMessages,
  outboxMessageById,
  outboxMessages,
  type OutboxMessage,
} from '../outbox/outbox.queries';
import { checkWebhookUrl, RefusedUrl } from './outbound-webhooks.address';
import { type OutboundWebhookRow, type WebhookEventBody } from './outbound-webhooks.queries';
import type { CreateOutboundWebhook, UpdateOutboundWebhook } from './outbound-webhooks.schemas';

/** An endpoint just created or given a new secret: its row and the secret, shown this once. */
export type OutboundWebhookWithSecret = { row: OutboundWebhookRow; secret: string };

const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;
const notFound = () => NotFound('Outbound webhook not found');

/** What the audit trail keeps of an endpoint: never its secret. */
const audited = ({ secret: _secret, ...row }: OutboundWebhookRow) => row;

/**
 * The outbound webhooks admins set up (issue 32): the endpoints, their secrets and their deliveries
 * (the outbox's webhook messages). The URL is checked against the address rules on save.
 */
export function outboundWebhooksService(db: Db, allowPrivate: readonly string[]) {
  async function checkedUrl(url: string): Promise<string> {
    try {
      return (await checkWebhookUrl(url, allowPrivate)).url.toString();
    } catch (err) {
      if (!(err instanceof RefusedUrl)) throw err;
      throw BadRequest('Validation failed', { errors: [{ field: 'url', message: err.message }] });
    }
  }
  const find = async (id: string, trx: Db = db): Promise<OutboundWebhookRow> => {
    const row = await trx<OutboundWebhookRow>('outbound_webhooks').where({ id }).first();
    if (!row) throw notFound();
    return row;
  };
  /** A new delivery to the endpoint, in the caller's transaction; answers it. */
  async function enqueue(
    trx: Knex.Transaction,
    endpoint: OutboundWebhookRow,
    body: WebhookEventBody,
  ): Promise<OutboxMessage> {
    if (!endpoint.active)
      throw Conflict('The outbound webhook is inactive: turn it on (PATCH active: true) to send to it');
    await enqueueMessages(trx, [{ channel: 'webhook', kind: body.type, destination: endpoint.id, payload: body }]);
    const [message] = await outboxMessages(
      trx,
      { channel: 'webhook', destination: endpoint.id },
      { limit: 1, offset: 0 },
    );
    return message;
  }

  return {
    async create(actor: Actor, input: CreateOutboundWebhook): Promise<OutboundWebhookWithSecret> {
      const url = await checkedUrl(input.url);
      const secret = newSecret();
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const [row] = await trx<OutboundWebhookRow>('outbound_webhooks')
          .insert({
            url,
            events: [...new Set(input.events)],
            description: input.description || null,
            secret,
            created_by: actor.userId,
          })
          .returning('*');
        return {
          result: { row, secret },
          audit: { entityType: 'outbound_webhook', entityId: row.id, action: 'create', after: audited(row) },
        };
      });
    },

    list(): Promise<OutboundWebhookRow[]> {
      return db<OutboundWebhookRow>('outbound_webhooks').orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ]);
    },

    get: (id: string) => find(id),

    async update(actor: Actor, id: string, input: UpdateOutboundWebhook): Promise<OutboundWebhookRow> {
      const url = input.url === undefined ? undefined : await checkedUrl(input.url);
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const before = await trx<OutboundWebhookRow>('outbound_webhooks').where({ id }).forUpdate().first();
        if (!before) throw notFound();
        const changes: Record<string, unknown> = { updated_at: trx.fn.now() };
        if (url !== undefined) changes.url = url;
        if (input.events !== undefined) changes.events = [...new Set(input.events)];
        if (input.description !== undefined) changes.description = input.description || null;
        if (input.active !== undefined) {
          changes.active = input.active;
          // turned on again: it starts afresh
          if (input.active && !before.active) Object.assign(changes, { failing_since: null, deactivated_at: null });
        }
        const [row] = await trx<OutboundWebhookRow>('outbound_webhooks').where({ id }).update(changes).returning('*');
        return {
          result: row,
          audit: {
            entityType: 'outbound_webhook',
            entityId: id,
            action: 'update',
            before: audited(before),
            after: audited(row),
          },
        };
      });
    },

    /** Deletes the endpoint; its pending deliveries fail (the endpoint was deleted). */
    async delete(actor: Actor, id: string): Promise<void> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const [deleted] = await trx<OutboundWebhookRow>('outbound_webhooks').where({ id }).delete().returning('*');
        if (!deleted) throw notFound();
        return {
          result: undefined,
          audit: { entityType: 'outbound_webhook', entityId: id, action: 'delete', before: audited(deleted) },
        };
      });
    },

    /** A new secret at once: deliveries from now on are signed with it. */
    async rotateSecret(actor: Actor, id: string): Promise<OutboundWebhookWithSecret> {
      const secret = newSecret();
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const [row] = await trx<OutboundWebhookRow>('outbound_webhooks')
          .where({ id })
          .update({ secret, updated_at: trx.fn.now() })
          .returning('*');
        if (!row) throw notFound();
        return {
          result: { row, secret },
          audit: {
            entityType: 'outbound_webhook',
            entityId: id,
            action: 'rotate_secret',
            after: { secret: '[redacted]' },
          },
        };
      });
    },

    /** The endpoint's deliveries, newest first, and how many there are. */
    async deliveries(id: string, page: number, limit: number): Promise<{ rows: OutboxMessage[]; total: number }> {
      await find(id);
      const filter = { channel: 'webhook' as const, destination: id };
      const [rows, total] = await allQueries(db, [
        () => outboxMessages(db, filter, { limit, offset: (page - 1) * limit }),
        () => countOutboxMessages(db, filter),
      ]);
      return { rows, total };
    },

    /** The delivery's event again, as a new delivery (a new id; the event's id is the same). */
    async redeliver(actor: Actor, id: string, deliveryId: string): Promise<OutboxMessage> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const endpoint = await find(id, trx);
        const earlier = await outboxMessageById(trx, deliveryId);
        if (!earlier || earlier.channel !== 'webhook' || earlier.destination !== id)
          throw NotFound('Delivery not found');
        const message = await enqueue(trx, endpoint, earlier.payload as WebhookEventBody);
        return {
          result: message,
          audit: {
            entityType: 'outbound_webhook',
            entityId: id,
            action: 'redeliver',
            after: { deliveryId: message.id, of: deliveryId, event: earlier.kind },
          },
        };
      });
    },

    /** A `ping` event to this endpoint (whatever it subscribes to). */
    async ping(id: string): Promise<OutboxMessage> {
      return transaction(db, async (trx) => {
        const endpoint = await find(id, trx);
        return enqueue(trx, endpoint, {
          id: randomUUID(),
          type: 'ping',
          createdAt: new Date().toISOString(),
          data: { webhookId: endpoint.id, url: endpoint.url, message: 'ping' },
        });
      });
    },
  };
}
