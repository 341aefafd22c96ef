import type { Knex } from 'knex';
import { namedRecipients, withSwitchOn } from '../emails/emails.service';
import { queueEmail } from '../outbox/outbox.queries';
import { KNOWN_SETTINGS } from '../settings/settings.schemas';
import { settingsService } from '../settings/settings.service';
import { activeUsersWithRoles } from '../users/users.queries';
import { publishEvent, type WebhookEvent } from '../outbound-webhooks/outbound-webhooks.queries';
import { presentRequest, SHORT_REASON_TEXT, shortfallOf } from './requests.present';
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
  toFulfil: 'request-to-fulfil',
  restrictedApproved: 'request-restricted-approved',
} as const;

/** The setting naming the stores' request inbox: who is told a request is ready to fulfil. */
export const NOTIFY_EMAILS_SETTING = 'requests.notifyEmails';

/**
 * The stores' request inbox (issue 39): the addresses of the setting requests.notifyEmails, or, when
 * it names none, the managers and admins who keep the order-received email on. Either way the
 * low-stock digest switch on My account covers it: a person who turned it off is left out.
 */
export async function requestInbox(trx: Knex.Transaction): Promise<string[]> {
  const setting = KNOWN_SETTINGS[NOTIFY_EMAILS_SETTING].safeParse(
    await settingsService(trx).get(NOTIFY_EMAILS_SETTING),
  );
  const named = setting.success ? setting.data.emails : [];
  if (named.length > 0) return namedRecipients(trx, 'lowStockDigest', named);
  const managers = await activeUsersWithRoles(trx, ['manager', 'admin']);
  const keeping = await withSwitchOn(trx, 'lowStockDigest', await withSwitchOn(trx, 'orderReceived', managers));
  return keeping.map((u) => u.email.toLowerCase());
}

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
    chargedTotal: r.charged_total,
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
    shortfall: shortfallOf(record).map((line) => ({ ...line, why: SHORT_REASON_TEXT[line.reason] })),
  };
}

/**
 * The messages of the state the request has just entered (record.request.status), written in the
 * change's transaction (issue 33): its request.* event, with the request's API shape, to the
 * outbound webhooks subscribed; the approver is emailed when approval is needed (when the code has
 * one); the requester on approval, rejection, ready, and a shortfall at fulfilment; the stores'
 * request inbox when the request becomes ready to fulfil (submitted without awaiting approval, or approved).
 */
export async function announce(
  trx: Knex.Transaction,
  record: RequestRecord,
  context: { by: Express.User; awaitsApproval?: boolean },
): Promise<void> {
  const { status, reference } = record.request;
  // the events go to the admins' webhooks: the staff's picture
  await publishEvent(trx, REQUEST_EVENTS[status], presentRequest(record, 'staff'));
  const data = emailData(record);
  const requester = record.requester.email;
  const toStores = async () => {
    const inbox = await requestInbox(trx);
    if (inbox.length > 0)
      await queueEmail(trx, {
        to: inbox,
        subject: `Request ${reference} is ready to fulfil`,
        template: REQUEST_EMAILS.toFulfil,
        data,
      });
  };
  switch (status) {
    case 'submitted':
      if (!context.awaitsApproval) await toStores();
      break;
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
      await toStores();
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

/**
 * Issue 43: a manager approved the request's restricted substances (its status unchanged), written in
 * the approval's transaction: the requester is emailed, as on the charge code's approval.
 */
export async function announceRestrictedApproval(trx: Knex.Transaction, record: RequestRecord): Promise<void> {
  await queueEmail(trx, {
    to: record.requester.email,
    subject: `Request ${record.request.reference}: restricted substances approved`,
    template: REQUEST_EMAILS.restrictedApproved,
    data: emailData(record),
  });
}
