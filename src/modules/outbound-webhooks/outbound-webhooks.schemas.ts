import { z } from 'zod';
import '../../http/openapi';
import { limitParam, PageParam } from '../../http/pagination';
import { WEBHOOK_EVENTS } from './outbound-webhooks.queries';

export const WebhookEventName = z
  .enum(WEBHOOK_EVENTS, { error: `must be one of ${WEBHOOK_EVENTS.join(', ')}` })
  .openapi({ description: 'an event type' });

const Url = z.string().trim().min(1, 'is required').max(2000).openapi({
  description:
    'https:// to a public address; a loopback, private, link-local or metadata address (and http://) only for a host, address or range OUTBOUND_WEBHOOKS_ALLOW_PRIVATE lists',
});
const Events = z
  .array(WebhookEventName)
  .min(1, 'must name at least one event')
  .max(50)
  .openapi({ description: `the events delivered: ${WEBHOOK_EVENTS.join(', ')}` });
const Description = z.string().trim().max(500);

export const CreateOutboundWebhook = z.object({ url: Url, events: Events, description: Description.optional() });
export type CreateOutboundWebhook = z.infer<typeof CreateOutboundWebhook>;

export const UpdateOutboundWebhook = z
  .object({
    url: Url.optional(),
    events: Events.optional(),
    description: Description.nullable().optional(),
    active: z.boolean().optional().openapi({ description: 'true turns a deactivated endpoint on again' }),
  })
  .refine((body) => Object.values(body).some((v) => v !== undefined), { message: 'nothing to change' });
export type UpdateOutboundWebhook = z.infer<typeof UpdateOutboundWebhook>;

export const WebhookIdParams = z.object({ id: z.uuid({ error: 'must be an outbound webhook id (uuid)' }) });
export const DeliveryParams = z.object({
  id: z.uuid({ error: 'must be an outbound webhook id (uuid)' }),
  deliveryId: z.uuid({ error: 'must be a delivery id (uuid)' }),
});

export const DeliveriesQuery = z.object({ page: PageParam, limit: limitParam(50, 200) });

export const OutboundWebhook = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    active: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
    failingSince: z.string().nullable().openapi({ description: 'since when its deliveries have been failing' }),
    deactivatedAt: z
      .string()
      .nullable()
      .openapi({ description: 'when it was turned off after failing for 24 hours (its admins were emailed)' }),
  })
  .openapi('OutboundWebhook');
export type OutboundWebhook = z.infer<typeof OutboundWebhook>;
export const OutboundWebhookList = z.array(OutboundWebhook);

export const CreatedOutboundWebhook = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    active: z.literal(true),
    secret: z.string().openapi({ description: 'signs every delivery (X-Stores-Signature); shown this once' }),
    createdAt: z.string(),
  })
  .openapi('CreatedOutboundWebhook');
export type CreatedOutboundWebhook = z.infer<typeof CreatedOutboundWebhook>;

export const RotatedSecret = z
  .object({ id: z.string(), secret: z.string().openapi({ description: 'the new secret, shown this once' }) })
  .openapi('RotatedOutboundWebhookSecret');
export type RotatedSecret = z.infer<typeof RotatedSecret>;

export const WebhookDelivery = z
  .object({
    id: z.string().openapi({ description: 'the delivery id (X-Stores-Delivery)' }),
    event: z.string(),
    eventId: z.string().openapi({ description: "the event's id (the body's id), the same in a redelivery" }),
    status: z.enum(['pending', 'held', 'sent', 'failed']),
    statusCode: z.number().int().nullable().openapi({ description: "the last attempt's HTTP status" }),
    attempts: z.number().int(),
    durationMs: z.number().int().nullable().openapi({ description: "the last attempt's duration" }),
    nextAttemptAt: z.string().nullable().openapi({ description: 'when it is tried next (pending only)' }),
    lastError: z.string().nullable(),
    createdAt: z.string(),
    sentAt: z.string().nullable(),
    failedAt: z.string().nullable(),
  })
  .openapi('OutboundWebhookDelivery');
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const WebhookDeliveryPage = z
  .object({
    deliveries: z.array(WebhookDelivery),
    pagination: z.object({ page: z.number(), limit: z.number(), total: z.number(), totalPages: z.number() }),
  })
  .openapi('OutboundWebhookDeliveryPage');
export { WEBHOOK_EVENTS } from './outbound-webhooks.queries';
