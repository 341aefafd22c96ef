import { z } from 'zod';
import '../../http/openapi';
import { limitParam, PageParam } from '../../http/pagination';
import { OUTBOX_CHANNELS, OUTBOX_STATUSES } from './outbox.queries';

export const OutboxQuery = z.object({
  status: z.enum(OUTBOX_STATUSES).optional(),
  kind: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .openapi({ description: "an email's kind (order_received, ...) or a webhook's event type (sale.created, ...)" }),
  channel: z.enum(OUTBOX_CHANNELS).optional(),
  page: PageParam,
  limit: limitParam(50, 500),
});
export type OutboxQuery = z.infer<typeof OutboxQuery>;

export const OutboxIdParams = z.object({ id: z.uuid({ error: 'must be an outbox message id (uuid)' }) });

export const OutboxMessage = z
  .object({
    id: z
      .string()
      .openapi({ description: 'the stable id receivers de-duplicate by (X-Stores-Delivery, the Message-ID)' }),
    channel: z.enum(OUTBOX_CHANNELS),
    kind: z.string(),
    destination: z.string().openapi({ description: "an email address, or the outbound webhook's id" }),
    status: z.enum(OUTBOX_STATUSES),
    attempts: z.number().int(),
    lastError: z.string().nullable(),
    lastStatusCode: z.number().int().nullable(),
    nextAttemptAt: z.string().nullable().openapi({ description: 'pending only' }),
    createdAt: z.string(),
    sentAt: z.string().nullable(),
    failedAt: z.string().nullable(),
  })
  .openapi('OutboxMessage');
export type OutboxMessage = z.infer<typeof OutboxMessage>;

export const OutboxPage = z
  .object({
    messages: z.array(OutboxMessage),
    pagination: z.object({ page: z.number(), limit: z.number(), total: z.number(), totalPages: z.number() }),
  })
  .openapi('OutboxPage');
export type OutboxPage = z.infer<typeof OutboxPage>;
