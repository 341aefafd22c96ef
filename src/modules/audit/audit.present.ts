import { pageInfo } from '../../http/pagination';
import { spreadsheetText } from '../../lib/spreadsheet-safe';
import type { AuditEvent } from './audit.schemas';
import type { AuditRow } from './audit.service';

export function presentAuditEvent(row: AuditRow): AuditEvent {
  return {
    id: String(row.id),
    occurredAt: row.occurred_at.toISOString(),
    actor: {
      kind: row.actor_kind,
      userId: row.actor_user_id,
      email: row.actor_email,
      mcpKeyId: row.actor_mcp_key_id,
      ip: row.actor_ip,
    },
    entityType: row.entity_type,
    entityId: row.entity_id,
    action: row.action,
    before: row.before,
    after: row.after,
  };
}

export const presentAuditPage = (rows: AuditRow[], page: number, limit: number, total: number) => ({
  events: rows.map(presentAuditEvent),
  pagination: pageInfo(page, limit, total),
});

export const AUDIT_CSV_COLUMNS = [
  'ID',
  'Occurred At',
  'Actor Kind',
  'Actor User ID',
  'Actor Email',
  'MCP Key ID',
  'IP',
  'Entity Type',
  'Entity ID',
  'Action',
  'Before',
  'After',
];

/** One CSV record; before and after as JSON text; text a person typed (an email, an id) neutralised for spreadsheets. */
export const auditCsvRecord = (row: AuditRow) => [
  row.id,
  row.occurred_at.toISOString(),
  row.actor_kind,
  row.actor_user_id ?? '',
  spreadsheetText(row.actor_email),
  row.actor_mcp_key_id ?? '',
  row.actor_ip ?? '',
  row.entity_type,
  spreadsheetText(row.entity_id),
  row.action,
  row.before ? JSON.stringify(row.before) : '',
  row.after ? JSON.stringify(row.after) : '',
];
