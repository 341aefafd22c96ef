import type { Knex } from 'knex';
import { queueEmail } from '../outbox/outbox.queries';
import { publishEvent, type WebhookEvent } from '../outbound-webhooks/outbound-webhooks.queries';
import { presentRequest, shortfallOf } from './requests.present';
import type { RequestRecord } from './requests.records';
import type { RequestStatus } from './requests.schemas';

/** The event each state a request enters publishes to the outbound webhooks. */
export const REQUEST_EVENTS = {
  submitted: 'request.submitted',
  awaiting_approval: 'request.awaiting_approval',
  approved: 'request.approved',
  rejected: 'request.rejected',
  ready: 'request.ready',
  collected: 'request.collected',
  cancelled: 'request.cancelled',
} as const satisfies Record<RequestStatus, WebhookEvent>;

/** The email templates (views/emails/<template>.text.ejs and .html.ejs) the requests send. */
export const REQUEST_EMAILS = {
  approvalNeeded: 'request-approval-needed',
  approved: 'request-approved',
  rejected: 'request-rejected',
  ready: 'request-ready',
  shortfall: 'request-shortfall',
} as const;

/**
 * What an email about a request carries: the request's reference, code, lines and totals, the
 * comment of the change, and its id (the template links `${publicUrl}/requests/<id>`, a page that
 * asks the reader to sign in). No secret and no token: the link opens nothing by itself.
 */
function emailData(record: RequestRecord) {
  const { request: r } = record;
  const last = record.history[record.history.length - 1];
  return {
    requestId: r.id,
    reference: r.reference,
    status: r.status,
    chargeCode: r.charge_code,
    requesterName: `${record.requester.first_name} ${record.requester.last_name}`.trim(),
    requesterEmail: record.requester.email,
    totalAmount: r.total_amount,
    neededBy: r.needed_by,
    notes: r.notes,
    comment: last?.comment ?? null,
    saleNumber: r.sale_number,
    items: record.lines.map((l) => ({
      name: l.item_name,
      sku: l.item_sku,
      quantity: l.quantity,
      fulfilledQuantity: l.fulfilled_quantity,
      total: l.total,
    })),
    shortfall: shortfallOf(record),
  };
}

/**
 * The messages of the state the request has just entered (record.request.status), written in the
 * change's transaction (issue 33): its request.* event, with the request's API shape, to the
 * outbound webhooks subscribed; the approver is emailed when approval is needed (when the code has
 * one); the requester on approval, rejection, ready, and a shortfall at fulfilment.
 */
export async function announce(
  trx: Knex.Transaction,
  record: RequestRecord,
  _context: { by: Express.User },
): Promise<void> {
  const { status, reference } = record.request;
  await publishEvent(trx, REQUEST_EVENTS[status], presentRequest(record));
  const data = emailData(record);
  const requester = record.requester.email;
  switch (status) {
    case 'awaiting_approval':
      if (record.approverEmail)
        await queueEmail(trx, {
          to: record.approverEmail,
          subject: `Request ${reference} needs your approval`,
          template: REQUEST_EMAILS.approvalNeeded,
          data,
        });
      break;
    case 'approved':
      await queueEmail(trx, {
        to: requester,
        subject: `Request ${reference} was approved`,
        template: REQUEST_EMAILS.approved,
        data,
      });
      break;
    case 'rejected':
      await queueEmail(trx, {
        to: requester,
        subject: `Request ${reference} was rejected`,
        template: REQUEST_EMAILS.rejected,
        data,
      });
      break;
    case 'ready':
      await queueEmail(trx, {
        to: requester,
        subject: `Request ${reference} is ready to collect`,
        template: REQUEST_EMAILS.ready,
        data,
      });
      if (data.shortfall.length > 0)
        await queueEmail(trx, {
          to: requester,
          subject: `Request ${reference}: some items were short`,
          template: REQUEST_EMAILS.shortfall,
          data,
        });
      break;
    default:
      break;
  }
}
