import type { Db } from '../../db/knex';
import { allQueries } from '../../db/transaction';
import type { ChangeRecorder } from '../../db/transaction';
import { whereInDateRange } from '../../lib/date-range';
import type { Actor } from './audit.actor';
import type { AuditQuery } from './audit.schemas';

type AuditFilters = Pick<AuditQuery, 'entityType' | 'entityId' | 'userId' | 'action' | 'from' | 'to'>;

export type AuditEntry = {
  entityType: string;
  entityId: string | number | null;
  action: string;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
};

export type AuditRow = {
  id: string;
  occurred_at: Date;
  actor_kind: Actor['kind'];
  actor_user_id: string | null;
  actor_email: string | null;
  actor_mcp_key_id: number | null;
  actor_ip: string | null;
  entity_type: string;
  entity_id: string | null;
  action: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
};

/** Fields whose values never enter the trail (a secret, or the digest of one); the row says only that they changed. */
const SECRET_FIELD = /(password|secret|token|pin|key)(_?hash)?$|_hash$/i;

/** A record's fields as the trail keeps them: secrets replaced by a marker, dates as ISO strings. */
function redact(values: Record<string, unknown> | null | undefined): Record<string, unknown> | null {
  if (!values) return null;
  return Object.fromEntries(
    Object.entries(values).map(([field, value]) => [
      field,
      SECRET_FIELD.test(field)
        ? value == null
          ? null
          : '[redacted]'
        : value instanceof Date
          ? value.toISOString()
          : value,
    ]),
  );
}

/**
 * The append-only audit trail. `record` takes the transaction of the change it records, so the
 * change and its row commit or roll back together.
 */
export function auditTrail(db: Db) {
  const filtered = (filters: AuditFilters) => {
    const query = db<AuditRow>('audit_log');
    if (filters.entityType) query.where('entity_type', filters.entityType);
    if (filters.entityId) query.where('entity_id', filters.entityId);
    if (filters.userId) query.where('actor_user_id', filters.userId);
    if (filters.action) query.where('action', filters.action);
    return whereInDateRange(query, 'occurred_at', filters.from, filters.to);
  };

  return {
    record(actor: Actor, entry: AuditEntry): Promise<void> {
      return this.recordMany(actor, [entry]);
    },

    /** One row per entry, in one statement (a bulk change records each item it changed). */
    async recordMany(actor: Actor, entries: AuditEntry[]): Promise<void> {
      if (entries.length === 0) return;
      await db('audit_log').insert(
        entries.map((entry) => ({
          actor_kind: actor.kind,
          actor_user_id: actor.userId,
          actor_email: actor.email,
          actor_mcp_key_id: actor.mcpKeyId,
          actor_ip: actor.ip,
          entity_type: entry.entityType,
          entity_id: entry.entityId === null ? null : String(entry.entityId),
          action: entry.action,
          before: redact(entry.before),
          after: redact(entry.after),
        })),
      );
    },

    /** Newest first. */
    rows(filters: AuditFilters, paging: { page: number; limit: number }): Promise<AuditRow[]> {
      return filtered(filters)
        .orderBy([
          { column: 'occurred_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(paging.limit)
        .offset((paging.page - 1) * paging.limit);
    },

    /** A page, with the total of the whole filtered trail. */
    async page(
      filters: AuditFilters,
      paging: { page: number; limit: number },
    ): Promise<{ rows: AuditRow[]; total: number }> {
      const [rows, [{ count }]] = await allQueries(db, [
        () => this.rows(filters, paging),
        () => filtered(filters).count<{ count: number }[]>('* as count'),
      ]);
      return { rows, total: Number(count) };
    },
  };
}

/** The `audit` option of `transaction` (src/db/transaction.ts): the change's row in the trail, as `actor`. */
export const auditAs =
  (actor: Actor): ChangeRecorder<AuditEntry> =>
  (trx, entry) =>
    auditTrail(trx).record(actor, entry);
