import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { queueEmail } from '../outbox/outbox.queries';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { BadRequest, TooManyRequests } from '../../http/errors';
import type { Role } from '../../auth/roles';
import { rateLimitCounter } from '../../auth/rate-limits';
import { KNOWN_SETTINGS } from '../settings/settings.schemas';
import { settingsService } from '../settings/settings.service';
import { activeEmailDomains, activeUserContacts, activeUsersWithRoles, type UserContact } from '../users/users.queries';
import { EMAIL_SWITCHES, onByDefault, switchesOf, type EmailSwitch } from './emails.switches';

/** One switch as My account shows it. */
export type EmailSwitchChoice = { name: EmailSwitch; label: string; hint: string; on: boolean };

/** A person's switches: only those their role has (the others do not apply to them). */
export type EmailPreferences = Partial<Record<EmailSwitch, boolean>>;

type PreferenceRow = { user_id: string } & Partial<
  Record<(typeof EMAIL_SWITCHES)[EmailSwitch]['column'], boolean | null>
>;

async function preferenceRows(db: Db, userIds: string[]): Promise<Map<string, PreferenceRow>> {
  if (userIds.length === 0) return new Map();
  const rows: PreferenceRow[] = await db('email_preferences').whereIn('user_id', userIds).select('*');
  return new Map(rows.map((row) => [row.user_id, row]));
}

/** Whether the switch is on for the person: their choice, else their role's default; never for a role without it. */
function isOn(name: EmailSwitch, user: { role: Role }, row: PreferenceRow | undefined): boolean {
  if (!switchesOf(user.role).includes(name)) return false;
  return row?.[EMAIL_SWITCHES[name].column] ?? onByDefault(name, user.role);
}

/** Of these people, those with the switch on. */
export async function withSwitchOn(db: Db, name: EmailSwitch, users: UserContact[]): Promise<UserContact[]> {
  const rows = await preferenceRows(
    db,
    users.map((u) => u.id),
  );
  return users.filter((user) => isOn(name, user, rows.get(user.id)));
}

/**
 * The addresses an email governed by a switch goes to: the active users with the switch on among
 * `to` (user ids, or addresses), or among everyone whose role has the switch when `to` is absent.
 * An address that is no user's is kept as it is when `keepOthers` (a category's buyer outside the service).
 */
export async function emailRecipients(
  db: Db,
  name: EmailSwitch,
  to?: { ids?: string[]; emails?: string[]; keepOthers?: boolean },
): Promise<string[]> {
  const candidates = to ? await activeUserContacts(db, to) : await activeUsersWithRoles(db, EMAIL_SWITCHES[name].roles);
  const on = await withSwitchOn(db, name, candidates);
  const addresses = on.map((u) => u.email.toLowerCase());
  if (to?.keepOthers) {
    const users = new Set(candidates.map((u) => u.email.toLowerCase()));
    addresses.push(...(to.emails ?? []).map((e) => e.toLowerCase()).filter((e) => !users.has(e)));
  }
  return [...new Set(addresses)];
}

/**
 * Of the addresses named for an email (a category's buyers), those that may have it: an address
 * that is no active user's is kept as it is; a user's, unless they switched the switch off (whatever
 * their role: naming them makes the email theirs).
 */
export async function namedRecipients(db: Db, name: EmailSwitch, emails: string[]): Promise<string[]> {
  const wanted = [...new Set(emails.map((e) => e.toLowerCase()))];
  if (wanted.length === 0) return [];
  const users = await activeUserContacts(db, { emails: wanted });
  const rows = await preferenceRows(
    db,
    users.map((u) => u.id),
  );
  const off = new Set(
    users.filter((u) => rows.get(u.id)?.[EMAIL_SWITCHES[name].column] === false).map((u) => u.email.toLowerCase()),
  );
  return wanted.filter((e) => !off.has(e));
}

export function emailPreferencesService(db: Db) {
  return {
    /** The person's switches, as they stand (their choices, else their role's defaults). */
    async get(user: { id: string; role: Role }): Promise<EmailPreferences> {
      const row = (await preferenceRows(db, [user.id])).get(user.id);
      return Object.fromEntries(switchesOf(user.role).map((name) => [name, isOn(name, user, row)]));
    },

    /** The person's switches as My account lists them: each with its label, hint and state. */
    async choices(user: { id: string; role: Role }): Promise<EmailSwitchChoice[]> {
      const on = await this.get(user);
      return switchesOf(user.role).map((name) => ({
        name,
        label: EMAIL_SWITCHES[name].label,
        hint: EMAIL_SWITCHES[name].hint,
        on: on[name] === true,
      }));
    },

    /** The names of the switches the role has. */
    switchesOf,

    /** Sets the switches given (a switch the role does not have is a 400 naming it); answers them all. */
    async set(user: { id: string; role: Role }, changes: EmailPreferences): Promise<EmailPreferences> {
      const mine = switchesOf(user.role);
      const refused = (Object.keys(changes) as EmailSwitch[]).filter(
        (name) => changes[name] !== undefined && !mine.includes(name),
      );
      if (refused.length > 0)
        throw BadRequest('Validation failed', {
          errors: refused.map((field) => ({
            field,
            message: `is not an email your role gets (only ${EMAIL_SWITCHES[field].roles.join(', ')})`,
          })),
        });
      const columns = Object.fromEntries(
        mine.filter((name) => changes[name] !== undefined).map((name) => [EMAIL_SWITCHES[name].column, changes[name]]),
      );
      if (Object.keys(columns).length > 0)
        await db('email_preferences')
          .insert({ user_id: user.id, ...columns, updated_at: db.fn.now() })
          .onConflict('user_id')
          .merge();
      return this.get(user);
    },
  };
}

/** An order's line as the order-received email lists it. */
export type ReceivedOrderLine = { name: string; sku: string | null; quantity: string; receivedQuantity: string };

/**
 * The order-received email to whoever created the order (if they still have an account and the
 * switch on), in the receipt's transaction: the subject names the order number.
 */
export async function queueOrderReceivedEmail(
  trx: Knex.Transaction,
  order: { orderId: string; supplierName: string | null; createdBy: string | null; lines: ReceivedOrderLine[] },
  receivedBy: string | null,
): Promise<void> {
  if (!order.createdBy) return;
  const to = await emailRecipients(trx, 'orderReceived', { ids: [order.createdBy] });
  if (to.length === 0) return;
  const [receiver] = receivedBy ? await activeUserContacts(trx, { ids: [receivedBy] }) : [];
  await queueEmail(trx, {
    to,
    subject: `Order ${order.orderId} received`,
    template: 'order-received',
    data: {
      orderId: order.orderId,
      supplierName: order.supplierName,
      complete: true,
      receivedBy: receiver ? `${receiver.firstName} ${receiver.lastName}`.trim() : null,
      lines: order.lines,
    },
  });
}

/** A sale as its receipt shows it: amounts are decimal strings. */
export type SaleReceipt = {
  /** the sale's id (its page is /sales/<id>) */
  id: number;
  saleId: string;
  chargeCode: string;
  deliveredTo: string | null;
  /** issue 43: the COSHH assessment reference the sale was made under, or null */
  coshhReference: string | null;
  createdAt: Date;
  subtotalAmount: string;
  vatAmount: string;
  totalAmount: string;
  lines: { name: string; sku: string; quantity: string; unitPrice: string; total: string }[];
};

/** Receipts one person may have emailed an hour, unless the setting email.receiptsPerHour says otherwise. */
export const RECEIPTS_PER_HOUR = 20;

/** The domains a receipt may go to: the setting email.recipientDomains, else the domains of the active users' addresses. */
export async function recipientDomains(db: Db): Promise<string[]> {
  const setting = KNOWN_SETTINGS['email.recipientDomains'].safeParse(
    await settingsService(db).get('email.recipientDomains'),
  );
  return setting.success ? setting.data.domains : activeEmailDomains(db);
}

/**
 * Before a receipt is emailed to an address a request gave (issue 40: the service must not be a mail
 * relay): a 400 naming `field` unless the address is at one of the recipient domains or a subdomain of
 * one, then one of the person's receipts this hour (429 with Retry-After beyond), counted in
 * PostgreSQL so every instance spends the same allowance.
 */
export async function admitReceipt(db: Db, personId: string, address: string, field: string): Promise<void> {
  const domain = address.slice(address.lastIndexOf('@') + 1).toLowerCase();
  const domains = await recipientDomains(db);
  if (!domains.some((allowed) => domain === allowed || domain.endsWith(`.${allowed}`))) {
    throw BadRequest('Validation failed', {
      errors: [
        {
          field,
          message: `must be an address at ${domains.join(', ') || 'a domain of the setting email.recipientDomains'} to email a receipt (setting email.recipientDomains)`,
        },
      ],
    });
  }
  const setting = KNOWN_SETTINGS['email.receiptsPerHour'].safeParse(
    await settingsService(db).get('email.receiptsPerHour'),
  );
  const perHour = setting.success ? setting.data.count : RECEIPTS_PER_HOUR;
  try {
    await rateLimitCounter(db, 'email_receipt', perHour, 3600).consume(personId);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
    throw TooManyRequests(
      `At most ${perHour} receipts an hour may be emailed (setting email.receiptsPerHour); try again in ${retryAfter} s`,
      retryAfter,
    );
  }
}

/** The receipt of a sale to its recipient's address (ticked at the counter, per sale), in the sale's transaction. */
export async function queueSaleReceiptEmail(trx: Knex.Transaction, to: string, sale: SaleReceipt): Promise<void> {
  await queueEmail(trx, {
    to,
    subject: `Receipt for sale ${sale.saleId}`,
    template: 'sale-receipt',
    data: { ...sale, createdAt: sale.createdAt.toISOString() },
  });
}

/** A message that may come from a tool or a driver, with any credentials of a URL in it (user:password@) blanked. */
const withoutCredentials = (text: string) => text.replace(/\/\/[^/\s:@]+:[^@\s]*@/g, '//***@');

/** A failed scheduled backup: the admins with backup alerts on are told, in the transaction that records it. */
export async function queueBackupFailedEmail(
  trx: Knex.Transaction,
  run: { startedAt: Date; error: string },
): Promise<void> {
  const to = await emailRecipients(trx, 'backupAlerts');
  if (to.length === 0) return;
  await queueEmail(trx, {
    to,
    subject: 'Scheduled backup failed',
    template: 'backup-failed',
    data: { startedAt: run.startedAt.toISOString(), error: withoutCredentials(run.error).slice(0, 2000) },
  });
}

/** No scheduled backup has succeeded for longer than the schedule allows (the system alert's message says since when). */
export async function queueBackupOverdueEmail(trx: Knex.Transaction, alert: { message: string }): Promise<void> {
  const to = await emailRecipients(trx, 'backupAlerts');
  if (to.length === 0) return;
  await queueEmail(trx, {
    to,
    subject: 'Scheduled backups are overdue',
    template: 'backup-overdue',
    data: { message: withoutCredentials(alert.message) },
  });
}

/** A lot's recall as one person's email says it (issue 42): what to do, the item, the lot, and the sales of theirs that took it. */
export type LotRecallEmail = {
  message: string;
  itemName: string;
  sku: string;
  lotNumber: string;
  expiresOn: string | null;
  saleNumbers: string[];
};

/** The recall of a lot to one address that got it (a sale's recipient or its charge code's holder), in the recall's transaction. */
export async function queueLotRecallEmail(trx: Knex.Transaction, to: string, recall: LotRecallEmail): Promise<void> {
  await queueEmail(trx, {
    to,
    subject: `Recall: lot ${recall.lotNumber} of ${recall.itemName}`,
    template: 'lot-recall',
    data: recall,
  });
}
