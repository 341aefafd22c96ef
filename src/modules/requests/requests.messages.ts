import type { Knex } from 'knex';
import type { RequestRecord } from './requests.records';

/**
 * The messages a request's change of state sends, written in the change's transaction (issue 33):
 * the request.* event to the outbound webhooks, and the emails (the requester on approval,
 * rejection, ready and a shortfall; the approver when approval is needed).
 */
export async function announce(
  _trx: Knex.Transaction,
  _record: RequestRecord,
  _context: { by: Express.User },
): Promise<void> {
  // filled in once the outbox lands on main
}
