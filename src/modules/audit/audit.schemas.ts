import { z } from 'zod';
import '../../http/openapi';
import { limitParam, PageParam } from '../../http/pagination';
import { DateOrTimestamp } from '../../http/validate';

export const AuditQuery = z.object({
  entityType: z
    .string()
    .trim()
    .min(1)
    .max(50)
    .optional()
    .openapi({ description: 'e.g. user, charge_code, sale, setting' }),
  entityId: z.string().trim().min(1).max(100).optional(),
  userId: z
    .uuid({ error: 'must be a user id (UUID)' })
    .optional()
    .openapi({ description: 'the acting user (for an MCP key, its creator)' }),
  action: z
    .string()
    .trim()
    .min(1)
    .max(50)
    .optional()
    .openapi({ description: 'e.g. create, update, delete, hold, sign_in' }),
  from: DateOrTimestamp.optional().openapi({ description: 'inclusive; a date means the start of that UTC day' }),
  to: DateOrTimestamp.optional().openapi({ description: 'inclusive; a date means the whole of that UTC day' }),
  page: PageParam,
  limit: limitParam(50, 500),
  format: z
    .enum(['json', 'csv'])
    .default('json')
    .openapi({ description: 'csv: every matching row (no paging), as a download' }),
});
export type AuditQuery = z.infer<typeof AuditQuery>;

export const AuditEvent = z
  .object({
    id: z.string(),
    occurredAt: z.string(),
    actor: z.object({
      kind: z.enum(['session', 'token', 'mcp-key', 'system', 'anonymous']),
      userId: z.string().nullable(),
      email: z.string().nullable(),
      mcpKeyId: z.number().nullable(),
      ip: z.string().nullable(),
    }),
    entityType: z.string(),
    entityId: z.string().nullable(),
    action: z.string(),
    before: z.record(z.string(), z.unknown()).nullable(),
    after: z.record(z.string(), z.unknown()).nullable(),
  })
  .openapi('AuditEvent');
export type AuditEvent = z.infer<typeof AuditEvent>;

export const AuditPage = z
  .object({
    events: z.array(AuditEvent),
    pagination: z.object({ page: z.number(), limit: z.number(), total: z.number(), totalPages: z.number() }),
  })
  .openapi('AuditPage');
