import { pageInfo } from '../../http/pagination';
import type { OutboxMessage as OutboxMessageRecord } from './outbox.queries';
import type { OutboxMessage, OutboxPage } from './outbox.schemas';

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

export function presentOutboxMessage(m: OutboxMessageRecord): OutboxMessage {
  return {
    id: m.id,
    channel: m.channel,
    kind: m.kind,
    destination: m.destination,
    status: m.status,
    attempts: m.attempts,
    lastError: m.lastError,
    lastStatusCode: m.lastStatusCode,
    nextAttemptAt: m.status === 'pending' ? iso(m.nextAttemptAt) : null,
    createdAt: iso(m.createdAt)!,
    sentAt: iso(m.sentAt),
    failedAt: iso(m.failedAt),
  };
}

export const presentOutboxPage = (
  { rows, total }: { rows: OutboxMessageRecord[]; total: number },
  page: number,
  limit: number,
): OutboxPage => ({ messages: rows.map(presentOutboxMessage), pagination: pageInfo(page, limit, total) });
