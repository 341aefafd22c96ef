import type { Db } from '../../db/knex';
import { allQueries } from '../../db/transaction';
import { Conflict, NotFound } from '../../http/errors';
import {
  countOutboxMessages,
  outboxMessageById,
  outboxMessages,
  retryNow,
  type OutboxFilter,
  type OutboxMessage,
  type OutboxStatus,
} from './outbox.queries';

/** Whether a message may be retried now: only a failed one. The service's check and the page's Retry now button. */
export const isRetryable = (message: { status: OutboxStatus }): boolean => message.status === 'failed';

/** The outbox as admins see it (issue 32): its messages, and Retry now on a failed one. */
export function outboxService(db: Db) {
  return {
    async page(filter: OutboxFilter, page: number, limit: number): Promise<{ rows: OutboxMessage[]; total: number }> {
      const [rows, total] = await allQueries(db, [
        () => outboxMessages(db, filter, { limit, offset: (page - 1) * limit }),
        () => countOutboxMessages(db, filter),
      ]);
      return { rows, total };
    },

    /** A failed message goes again now, with a fresh day of retries; 409 unless it failed. */
    async retry(id: string): Promise<OutboxMessage> {
      const message = await outboxMessageById(db, id);
      if (!message) throw NotFound('Outbox message not found');
      const refused = (status: OutboxStatus) => Conflict(`Only a failed message can be retried; this one is ${status}`);
      if (!isRetryable(message)) throw refused(message.status);
      // the UPDATE holds the same rule, against a retry or a delivery that came in between
      const retried = await retryNow(db, id);
      if (!retried) throw refused((await outboxMessageById(db, id))?.status ?? message.status);
      return retried;
    },
  };
}
