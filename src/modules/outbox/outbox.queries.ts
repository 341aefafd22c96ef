import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { sql, toRaw } from '../../db/sql';

export const OUTBOX_CHANNELS = ['email', 'webhook'] as const;
export type OutboxChannel = (typeof OUTBOX_CHANNELS)[number];

export const OUTBOX_STATUSES = ['pending', 'held', 'sent', 'failed'] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];

/** The PostgreSQL notification a commit that wrote outbox messages sends; the workers listen for it. */
export const OUTBOX_NOTIFY_CHANNEL = 'outbox_messages';

export type NewOutboxMessage = {
  channel: OutboxChannel;
  /** an email's kind (its template) or a webhook's event type */
  kind: string;
  /** an email address, or the outbound webhook's id */
  destination: string;
  payload: Record<string, unknown>;
};

export type OutboxMessage = NewOutboxMessage & {
  id: string;
  seq: string;
  status: OutboxStatus;
  attempts: number;
  nextAttemptAt: Date;
  lastError: string | null;
  lastStatusCode: number | null;
  lastDurationMs: number | null;
  createdAt: Date;
  retryUntil: Date;
  sentAt: Date | null;
  failedAt: Date | null;
};

/** What an email in the outbox holds: rendered when it is sent, from `views/emails/<template>.{text,html}.ejs`. */
export type EmailPayload = { subject: string; template: string; data: Record<string, unknown> };

const COLUMNS = sql.raw(`id, seq::text AS seq, channel, kind, destination, payload, status, attempts,
  next_attempt_at AS "nextAttemptAt", last_error AS "lastError", last_status_code AS "lastStatusCode",
  last_duration_ms AS "lastDurationMs", created_at AS "createdAt", retry_until AS "retryUntil", sent_at AS "sentAt", failed_at AS "failedAt"`);

/**
 * Writes the messages in the caller's transaction, so they leave only if the change that caused
 * them commits; the commit wakes the delivery workers.
 */
export async function enqueueMessages(trx: Knex.Transaction, messages: NewOutboxMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await toRaw(
    trx,
    sql`INSERT INTO outbox_messages (channel, kind, destination, payload)
        SELECT m.channel, m.kind, m.destination, m.payload
        FROM jsonb_to_recordset(${JSON.stringify(messages)}::jsonb)
          AS m(channel text, kind text, destination text, payload jsonb)`,
  );
  await trx.raw('SELECT pg_notify(?, NULL)', [OUTBOX_NOTIFY_CHANNEL]);
}

/** One email per address, sent after the caller's transaction commits (never if it rolls back). */
export async function queueEmail(
  trx: Knex.Transaction,
  email: { to: string | string[] } & EmailPayload,
): Promise<void> {
  const addresses = [...new Set((Array.isArray(email.to) ? email.to : [email.to]).map((a) => a.trim().toLowerCase()))];
  const payload: EmailPayload = { subject: email.subject, template: email.template, data: email.data };
  await enqueueMessages(
    trx,
    addresses.filter(Boolean).map((destination) => ({ channel: 'email', kind: email.template, destination, payload })),
  );
}

/**
 * Locks the next message a worker may send, of the given channels: due, pending, and the earliest
 * pending one of its destination, so each destination gets its messages one at a time in the order
 * of their changes. A message another worker holds is skipped (its destination's later ones wait).
 */
export async function claimNextMessage(
  trx: Knex.Transaction,
  channels: readonly OutboxChannel[],
): Promise<OutboxMessage | undefined> {
  const { rows } = await toRaw<{ rows: OutboxMessage[] }>(
    trx,
    sql`SELECT ${COLUMNS} FROM outbox_messages m
        WHERE m.status = 'pending' AND m.next_attempt_at <= now() AND m.channel = ANY(${channels as string[]})
          AND NOT EXISTS (
            SELECT 1 FROM outbox_messages e
            WHERE e.status = 'pending' AND e.channel = m.channel AND e.destination = m.destination AND e.seq < m.seq)
        ORDER BY m.seq
        LIMIT 1
        FOR UPDATE OF m SKIP LOCKED`,
  );
  return rows[0];
}

export type Attempt = { statusCode?: number; durationMs?: number };

export async function recordSent(trx: Knex.Transaction, id: string, attempt: Attempt): Promise<void> {
  await trx('outbox_messages')
    .where({ id })
    .update({
      status: 'sent',
      attempts: trx.raw('attempts + 1'),
      sent_at: trx.fn.now(),
      last_error: null,
      last_status_code: attempt.statusCode ?? null,
      last_duration_ms: attempt.durationMs ?? null,
    });
}

/** A failed attempt: tried again at retryAt, or failed for good when retryAt is null (a refusal, or past retryUntil). */
export async function recordFailedAttempt(
  trx: Knex.Transaction,
  id: string,
  attempt: Attempt & { error: string; retryAt: Date | null },
): Promise<void> {
  await trx('outbox_messages')
    .where({ id })
    .update({
      attempts: trx.raw('attempts + 1'),
      last_error: attempt.error.slice(0, 2000),
      last_status_code: attempt.statusCode ?? null,
      last_duration_ms: attempt.durationMs ?? null,
      ...(attempt.retryAt ? { next_attempt_at: attempt.retryAt } : { status: 'failed', failed_at: trx.fn.now() }),
    });
}

/** Nothing can send it now (no SMTP server is set): kept, readable, and sent once one is. */
export async function recordHeld(trx: Knex.Transaction, id: string): Promise<void> {
  await trx('outbox_messages').where({ id, status: 'pending' }).update({ status: 'held' });
}

/** The held messages of a channel younger than the age go out now; older ones stay held. */
export async function releaseHeld(db: Db, channel: OutboxChannel, maxAgeMs: number): Promise<number> {
  return db('outbox_messages')
    .where({ channel, status: 'held' })
    .andWhere('created_at', '>', db.raw(`now() - make_interval(secs => ?)`, [maxAgeMs / 1000]))
    .update({ status: 'pending', next_attempt_at: db.fn.now() });
}

/** A failed message goes again now, with a fresh day of retries. */
export async function retryNow(db: Db, id: string): Promise<OutboxMessage | undefined> {
  const { rows } = await toRaw<{ rows: OutboxMessage[] }>(
    db,
    sql`UPDATE outbox_messages
        SET status = 'pending', next_attempt_at = now(), retry_until = now() + interval '24 hours', failed_at = NULL
        WHERE id = ${id} AND status = 'failed'
        RETURNING ${COLUMNS}`,
  );
  if (rows.length > 0) await db.raw('SELECT pg_notify(?, NULL)', [OUTBOX_NOTIFY_CHANNEL]);
  return rows[0];
}

export type OutboxFilter = { status?: OutboxStatus; kind?: string; channel?: OutboxChannel; destination?: string };

/** The messages matching the filter, newest first. */
export async function outboxMessages(
  db: Db,
  filter: OutboxFilter,
  page: { limit: number; offset: number } = { limit: 100, offset: 0 },
): Promise<OutboxMessage[]> {
  const { rows } = await toRaw<{ rows: OutboxMessage[] }>(
    db,
    sql`SELECT ${COLUMNS} FROM outbox_messages
        WHERE (${filter.status ?? null}::text IS NULL OR status = ${filter.status ?? null})
          AND (${filter.kind ?? null}::text IS NULL OR kind = ${filter.kind ?? null})
          AND (${filter.channel ?? null}::text IS NULL OR channel = ${filter.channel ?? null})
          AND (${filter.destination ?? null}::text IS NULL OR destination = ${filter.destination ?? null})
        ORDER BY seq DESC
        LIMIT ${page.limit} OFFSET ${page.offset}`,
  );
  return rows;
}

/** How many messages failed for good in the last day (the system alert). */
export async function countFailedSince(db: Db, since: Date): Promise<number> {
  const row = await db('outbox_messages').where({ status: 'failed' }).andWhere('failed_at', '>=', since).count('*', {
    as: 'n',
  });
  return Number(row[0].n);
}
