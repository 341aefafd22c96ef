import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { startOutboxWorker, type OutboxWorker, type Sender } from '../modules/outbox/outbox.worker';
import type { OutboxChannel } from '../modules/outbox/outbox.queries';
import { webhookSender } from '../modules/outbound-webhooks/outbound-webhooks.sender';
import { emailSender, releaseHeldEmails } from '../modules/emails/emails.sender';

export type OutboxDeliveryDeps = { db: Knex; databaseUrl: string; config: Config; logger: Logger };

/** Each channel's sender; a channel without one keeps its messages pending. */
function senders(deps: OutboxDeliveryDeps): Partial<Record<OutboxChannel, Sender>> {
  return {
    webhook: webhookSender(deps),
    email: emailSender(deps.config),
  };
}

/** The outbox's delivery worker of this instance (every instance runs one; they share the work). */
export function startOutboxDelivery(deps: OutboxDeliveryDeps, options: { pollMs?: number } = {}): OutboxWorker {
  const logger = deps.logger.child({ module: 'outbox' });
  // the next poll sends what this releases
  void releaseHeldEmails(deps.db, deps.config, logger);
  return startOutboxWorker({
    db: deps.db,
    databaseUrl: deps.databaseUrl,
    logger,
    senders: senders(deps),
    retryBaseMs: deps.config.outboxRetryBaseMs,
    pollMs: options.pollMs,
  });
}
