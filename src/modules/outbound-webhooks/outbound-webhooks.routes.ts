import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { actorOf } from '../audit/audit.actor';
import {
  presentCreatedOutboundWebhook,
  presentDelivery,
  presentDeliveryPage,
  presentOutboundWebhook,
  presentRotatedSecret,
} from './outbound-webhooks.present';
import { WEBHOOK_EVENTS } from './outbound-webhooks.queries';
import {
  CreatedOutboundWebhook,
  CreateOutboundWebhook,
  DeliveriesQuery,
  DeliveryParams,
  OutboundWebhook,
  OutboundWebhookList,
  RotatedSecret,
  UpdateOutboundWebhook,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookIdParams,
} from './outbound-webhooks.schemas';
import { outboundWebhooksService } from './outbound-webhooks.service';

const SIGNING =
  'Each delivery is a POST of JSON {id, type, createdAt, data} with Content-Type: application/json, X-Stores-Event: <type>, ' +
  'X-Stores-Delivery: <delivery id> (stable across retries: de-duplicate by it) and ' +
  'X-Stores-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" with the secret>. A 2xx within 10 s is delivered; ' +
  'anything else is retried with exponential backoff for 24 hours; redirects are not followed.';

/** Admins' outbound webhooks (issue 32): endpoints that receive the service's events, signed. */
export function outboundWebhooksRoutes({ db, docs, config }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Outbound webhooks');
  const webhooks = outboundWebhooksService(db, config.outboundWebhooksAllowPrivate);
  const notFound = { description: 'Not found', schema: MessageBody };
  const invalid = { description: 'Validation failed (a refused URL names url)', schema: ValidationErrorBody };

  api.post(
    '/outbound-webhooks',
    {
      operationId: 'createOutboundWebhook',
      summary: 'Add an outbound webhook',
      description: `Events: ${WEBHOOK_EVENTS.join(', ')}. The secret is shown once. ${SIGNING}`,
      access: 'admin',
      body: CreateOutboundWebhook,
      responses: { 201: { description: 'Created', schema: CreatedOutboundWebhook }, 400: invalid },
    },
    async (req, res) => {
      res.status(201).json(presentCreatedOutboundWebhook(await webhooks.create(actorOf(req), req.input.body)));
    },
  );

  api.get(
    '/outbound-webhooks',
    {
      operationId: 'listOutboundWebhooks',
      summary: 'Every outbound webhook (without secrets)',
      access: 'admin',
      responses: { 200: { description: 'Outbound webhooks', schema: OutboundWebhookList } },
    },
    async (_req, res) => {
      res.json((await webhooks.list()).map(presentOutboundWebhook));
    },
  );

  api.get(
    '/outbound-webhooks/:id',
    {
      operationId: 'getOutboundWebhook',
      summary: 'An outbound webhook (without its secret)',
      access: 'admin',
      params: WebhookIdParams,
      responses: { 200: { description: 'The outbound webhook', schema: OutboundWebhook }, 404: notFound },
    },
    async (req, res) => {
      res.json(presentOutboundWebhook(await webhooks.get(req.input.params.id)));
    },
  );

  api.patch(
    '/outbound-webhooks/:id',
    {
      operationId: 'updateOutboundWebhook',
      summary: 'Change an outbound webhook',
      description:
        'url, events, description, active (true turns on an endpoint deactivated after failing for 24 hours).',
      access: 'admin',
      params: WebhookIdParams,
      body: UpdateOutboundWebhook,
      responses: { 200: { description: 'Changed', schema: OutboundWebhook }, 400: invalid, 404: notFound },
    },
    async (req, res) => {
      const { params, body } = req.input;
      res.json(presentOutboundWebhook(await webhooks.update(actorOf(req), params.id, body)));
    },
  );

  api.delete(
    '/outbound-webhooks/:id',
    {
      operationId: 'deleteOutboundWebhook',
      summary: 'Delete an outbound webhook',
      description: 'Its pending deliveries are not sent.',
      access: 'admin',
      params: WebhookIdParams,
      responses: { 204: 'Deleted', 404: notFound },
    },
    async (req, res) => {
      await webhooks.delete(actorOf(req), req.input.params.id);
      res.status(204).end();
    },
  );

  api.post(
    '/outbound-webhooks/:id/rotate-secret',
    {
      operationId: 'rotateOutboundWebhookSecret',
      summary: 'A new secret for an outbound webhook (shown once); deliveries from now on are signed with it',
      access: 'admin',
      params: WebhookIdParams,
      responses: { 200: { description: 'The new secret', schema: RotatedSecret }, 404: notFound },
    },
    async (req, res) => {
      res.json(presentRotatedSecret(await webhooks.rotateSecret(actorOf(req), req.input.params.id)));
    },
  );

  api.get(
    '/outbound-webhooks/:id/deliveries',
    {
      operationId: 'listOutboundWebhookDeliveries',
      summary: "An outbound webhook's deliveries, newest first",
      description: 'Each with its event, status, the last HTTP status code, attempts, duration and the next attempt.',
      access: 'admin',
      params: WebhookIdParams,
      query: DeliveriesQuery,
      responses: { 200: { description: 'A page of deliveries', schema: WebhookDeliveryPage }, 404: notFound },
    },
    async (req, res) => {
      const { params, query } = req.input;
      res.json(
        presentDeliveryPage(await webhooks.deliveries(params.id, query.page, query.limit), query.page, query.limit),
      );
    },
  );

  api.post(
    '/outbound-webhooks/:id/deliveries/:deliveryId/redeliver',
    {
      operationId: 'redeliverOutboundWebhookDelivery',
      summary: "Send a delivery's event again",
      description:
        "A new delivery (a new X-Stores-Delivery id) of the same body (the event's id unchanged). 409 when the endpoint is inactive.",
      access: 'admin',
      params: DeliveryParams,
      responses: {
        202: { description: 'Queued', schema: WebhookDelivery },
        404: notFound,
        409: { description: 'The endpoint is inactive', schema: MessageBody },
      },
    },
    async (req, res) => {
      const { id, deliveryId } = req.input.params;
      res.status(202).json(presentDelivery(await webhooks.redeliver(actorOf(req), id, deliveryId)));
    },
  );

  api.post(
    '/outbound-webhooks/:id/ping',
    {
      operationId: 'pingOutboundWebhook',
      summary: 'Send a ping event to an outbound webhook',
      description: 'Whatever events it subscribes to. 409 when the endpoint is inactive.',
      access: 'admin',
      params: WebhookIdParams,
      responses: {
        202: { description: 'Queued', schema: WebhookDelivery },
        404: notFound,
        409: { description: 'The endpoint is inactive', schema: MessageBody },
      },
    },
    async (req, res) => {
      res.status(202).json(presentDelivery(await webhooks.ping(req.input.params.id)));
    },
  );

  return api.router;
}
