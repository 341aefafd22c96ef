import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { presentOutboxMessage, presentOutboxPage } from './outbox.present';
import { OutboxIdParams, OutboxMessage, OutboxPage, OutboxQuery } from './outbox.schemas';
import { outboxService } from './outbox.service';

/** GET /api/outbox and Retry now: what the service has sent, is sending, holds, or gave up on. */
export function outboxRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Outbox');
  const outbox = outboxService(db);

  api.get(
    '/outbox',
    {
      operationId: 'listOutboxMessages',
      summary: 'The outbox: emails and webhook deliveries, newest first',
      description:
        'pending (waiting for its next attempt), held (no SMTP server is set), sent, failed (refused, or still failing after 24 hours), ' +
        'with attempts and the last error. Filter by status and kind (an email kind or a webhook event type).',
      access: 'admin',
      query: OutboxQuery,
      responses: {
        200: { description: 'A page of messages', schema: OutboxPage },
        400: { description: 'Validation failed', schema: ValidationErrorBody },
      },
    },
    async (req, res) => {
      const { page, limit, ...filter } = req.input.query;
      res.json(presentOutboxPage(await outbox.page(filter, page, limit), page, limit));
    },
  );

  api.post(
    '/outbox/:id/retry',
    {
      operationId: 'retryOutboxMessage',
      summary: 'Retry now: a failed message is sent again at once, with a fresh day of retries',
      access: 'admin',
      params: OutboxIdParams,
      responses: {
        200: { description: 'Pending again', schema: OutboxMessage },
        404: { description: 'Not found', schema: MessageBody },
        409: { description: 'The message has not failed', schema: MessageBody },
      },
    },
    async (req, res) => {
      res.json(presentOutboxMessage(await outbox.retry(req.input.params.id)));
    },
  );

  return api.router;
}
