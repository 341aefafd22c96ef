import { pageInfo } from '../../http/pagination';
import type { OutboxMessage } from '../outbox/outbox.queries';
import type {
  CreatedOutboundWebhook,
  OutboundWebhook,
  RotatedSecret,
  WebhookDelivery,
} from './outbound-webhooks.schemas';
import type { OutboundWebhookRow } from './outbound-webhooks.queries';
import type { OutboundWebhookWithSecret } from './outbound-webhooks.service';

export function presentOutboundWebhook(row: OutboundWebhookRow): OutboundWebhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    active: row.active,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    failingSince: row.failing_since?.toISOString() ?? null,
    deactivatedAt: row.deactivated_at?.toISOString() ?? null,
  };
}

/** A new endpoint: shown with its secret, this once. */
export const presentCreatedOutboundWebhook = ({ row, secret }: OutboundWebhookWithSecret): CreatedOutboundWebhook => ({
  id: row.id,
  url: row.url,
  events: row.events,
  description: row.description,
  active: true,
  secret,
  createdAt: row.created_at.toISOString(),
});

export const presentRotatedSecret = ({ row, secret }: OutboundWebhookWithSecret): RotatedSecret => ({
  id: row.id,
  secret,
});

export function presentDelivery(message: OutboxMessage): WebhookDelivery {
  return {
    id: message.id,
    event: message.kind,
    eventId: String((message.payload as { id?: unknown }).id ?? ''),
    status: message.status,
    statusCode: message.lastStatusCode,
    attempts: message.attempts,
    durationMs: message.lastDurationMs,
    nextAttemptAt: message.status === 'pending' ? new Date(message.nextAttemptAt).toISOString() : null,
    lastError: message.lastError,
    createdAt: new Date(message.createdAt).toISOString(),
    sentAt: message.sentAt ? new Date(message.sentAt).toISOString() : null,
    failedAt: message.failedAt ? new Date(message.failedAt).toISOString() : null,
  };
}

export const presentDeliveryPage = (
  { rows, total }: { rows: OutboxMessage[]; total: number },
  page: number,
  limit: number,
) => ({ deliveries: rows.map(presentDelivery), pagination: pageInfo(page, limit, total) });
