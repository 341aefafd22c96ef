import type { Knex } from 'knex';
import { sql, toRaw } from '../../db/sql';
import { categoryBuyers } from '../categories/categories.queries';
import { findItemsForLines, lowStockQuery, toLowStockItem, type LowStockRow } from '../items/items.queries';
import { queueEmail } from '../outbox/outbox.queries';
import { KNOWN_SETTINGS } from '../settings/settings.schemas';
import { settingsService } from '../settings/settings.service';
import { crossedDownTo, lastMovementIdAt } from '../stock-movements/stock-movements.queries';
import { emailRecipients, namedRecipients } from '../emails/emails.service';
import { lastEmailRun, recordEmailRun } from '../emails/emails.queries';
import {
  expiryWarningDays,
  markExpiryReported,
  storesToday,
  unreportedExpiryChanges,
  type ExpiryChange,
} from '../lots/lots.queries';
import { publishEvents } from '../outbound-webhooks/outbound-webhooks.queries';

/** The setting that says when the digest goes out (UK time); unset, DEFAULT_DIGEST_TIME. */
export const DIGEST_TIME_SETTING = 'notifications.digestTime';
export const DEFAULT_DIGEST_TIME = '07:00';
/** The clock the digest time is read on (the pages show UK time). */
const DIGEST_TIME_ZONE = 'Europe/London';
const RUN = 'low-stock-digest';
const EXPIRY_RUN = 'expiry-digest';

/** An item in a digest, as the template lists it. */
export type DigestItem = { name: string; sku: string; currentStock: string; minimumStock: string; category: string };

/** What a run of the digest did: whether it was due, and the items and addresses of what it queued. */
export type DigestOutcome = {
  outcome: 'not due' | 'already sent today' | 'nothing crossed' | 'queued';
  items: number;
  recipients: string[];
};
const nothing = (outcome: DigestOutcome['outcome']): DigestOutcome => ({ outcome, items: 0, recipients: [] });

async function digestTime(trx: Knex.Transaction): Promise<string> {
  const value = KNOWN_SETTINGS[DIGEST_TIME_SETTING].safeParse(await settingsService(trx).get(DIGEST_TIME_SETTING));
  return value.success ? value.data.time : DEFAULT_DIGEST_TIME;
}

/**
 * The daily low-stock digest, in the job's transaction (under its advisory lock): once the day's
 * digest time has passed and none went out since it, the items that crossed their minimum (a stock
 * movement from above it to at or below it) since the last digest's last movement, and are still
 * low, go to the buyers of their category, or to the managers (and admins) when it names none,
 * each person as their switch allows: one email per person with all their items. No email when
 * nothing crossed; either way the digest is marked done to its last movement.
 */
export async function sendLowStockDigest(trx: Knex.Transaction, now: Date): Promise<DigestOutcome> {
  const time = await digestTime(trx);
  const {
    rows: [clock],
  } = await toRaw<{ rows: { slot: Date; up_to: string; first_after: string }[] }>(
    trx,
    sql`SELECT (date_trunc('day', ${now}::timestamptz AT TIME ZONE ${DIGEST_TIME_ZONE}) + ${time}::time)
                 AT TIME ZONE ${DIGEST_TIME_ZONE} AS slot,
               ${lastMovementIdAt(sql`${now}::timestamptz`)} AS up_to,
               ${lastMovementIdAt(sql`${now}::timestamptz - interval '1 day'`)} AS first_after`,
  );
  if (now < clock.slot) return nothing('not due');
  const last = await lastEmailRun(trx, RUN);
  if (last && last.lastRunAt >= clock.slot) return nothing('already sent today');

  // the first digest looks back a day
  const after = last?.lastMovementId ?? clock.first_after;
  const upTo = clock.up_to;
  const rows: LowStockRow[] = await lowStockQuery(trx, 'outOfStockFirst').where(
    toRaw(trx, crossedDownTo(sql.raw('i.id'), sql`${after}::bigint`, sql`${upTo}::bigint`, sql.raw('i.minimum_stock'))),
  );
  await recordEmailRun(trx, RUN, { lastRunAt: now, lastMovementId: upTo });
  if (rows.length === 0) return nothing('nothing crossed');

  const items = rows.map(toLowStockItem);
  const buyers = await categoryBuyers(
    trx,
    items.map((i) => i.category.id),
  );
  let managers: string[] | undefined;
  const byPerson = new Map<string, DigestItem[]>();
  for (const item of items) {
    const named = buyers.get(item.category.id)?.buyerEmails ?? [];
    const to =
      named.length > 0
        ? await namedRecipients(trx, 'lowStockDigest', named)
        : (managers ??= await emailRecipients(trx, 'lowStockDigest'));
    for (const address of to) {
      const list = byPerson.get(address) ?? [];
      list.push({
        name: item.name,
        sku: item.sku,
        currentStock: item.currentStock,
        minimumStock: item.minimumStock,
        category: item.category.name,
      });
      byPerson.set(address, list);
    }
  }
  for (const [address, list] of byPerson) {
    await queueEmail(trx, {
      to: address,
      subject: `Low stock: ${list.length} ${list.length === 1 ? 'item' : 'items'} reached ${list.length === 1 ? 'its' : 'their'} minimum`,
      template: 'low-stock-digest',
      data: { items: list, since: last?.lastRunAt.toISOString() ?? null },
    });
  }
  return { outcome: 'queued', items: items.length, recipients: [...byPerson.keys()] };
}

/** A lot in the expiry digest, as the template lists it. */
export type ExpiryDigestLot = {
  itemId: number;
  name: string;
  sku: string;
  lotNumber: string;
  expiresOn: string;
  quantity: string;
  status: 'expiring' | 'expired';
};

/** What a run of the expiry digest did: whether it was due, the lots it reported and the addresses it queued for. */
export type ExpiryDigestOutcome = {
  outcome: 'not due' | 'already sent today' | 'nothing changed' | 'queued';
  lots: number;
  recipients: string[];
};

const lotsWord = (n: number) => `${n} ${n === 1 ? 'lot' : 'lots'}`;

/** The digest's subject: how many lots expired and how many are expiring. */
function expirySubject(lots: ExpiryDigestLot[]): string {
  const expired = lots.filter((l) => l.status === 'expired').length;
  const expiring = lots.length - expired;
  const parts = [
    ...(expired > 0 ? [`${lotsWord(expired)} expired`] : []),
    ...(expiring > 0 ? [`${lotsWord(expiring)} expiring`] : []),
  ];
  return `Lot expiry: ${parts.join(', ')}`;
}

/**
 * The daily expiry digest (issue 42), in the job's transaction (under its advisory lock), at the
 * low-stock digest's time: once the day's digest time has passed and none went out since it, the
 * lots that became `expiring` or `expired` since the last digest (each lot keeps the status last
 * reported, so each is reported once per status), published as lot.expiring and lot.expired
 * webhook events (one per lot) and emailed, one email per person, to the managers and admins who keep
 * the low-stock digest on and have not switched the expiry digest off. Nothing when nothing changed.
 */
export async function sendExpiryDigest(trx: Knex.Transaction, now: Date): Promise<ExpiryDigestOutcome> {
  const time = await digestTime(trx);
  const {
    rows: [clock],
  } = await toRaw<{ rows: { slot: Date }[] }>(
    trx,
    sql`SELECT (date_trunc('day', ${now}::timestamptz AT TIME ZONE ${DIGEST_TIME_ZONE}) + ${time}::time)
                 AT TIME ZONE ${DIGEST_TIME_ZONE} AS slot`,
  );
  const none = (outcome: ExpiryDigestOutcome['outcome']): ExpiryDigestOutcome => ({ outcome, lots: 0, recipients: [] });
  if (now < clock.slot) return none('not due');
  const last = await lastEmailRun(trx, EXPIRY_RUN);
  if (last && last.lastRunAt >= clock.slot) return none('already sent today');

  const today = storesToday(now);
  const warningDays = await expiryWarningDays(trx);
  const changes = await unreportedExpiryChanges(trx, today, warningDays);
  await recordEmailRun(trx, EXPIRY_RUN, { lastRunAt: now, lastMovementId: null });
  if (changes.length === 0) return none('nothing changed');

  await markExpiryReported(
    trx,
    changes.map((lot) => ({ id: lot.id, status: lot.status })),
  );
  const items = await findItemsForLines(trx, [...new Set(changes.map((lot) => lot.item_id))]);
  const records = changes.map((lot) => {
    const item = items.get(lot.item_id)!;
    return { lot, item: { id: item.id, sku: item.sku, name: item.name } };
  });
  const of = (status: ExpiryChange['status']) => records.filter(({ lot }) => lot.status === status);
  if (of('expiring').length > 0) await publishEvents(trx, 'lot.expiring', async () => of('expiring'));
  if (of('expired').length > 0) await publishEvents(trx, 'lot.expired', async () => of('expired'));

  const expiryOn = new Set(await emailRecipients(trx, 'expiryDigest'));
  const recipients = (await emailRecipients(trx, 'lowStockDigest')).filter((address) => expiryOn.has(address));
  const lots: ExpiryDigestLot[] = records.map(({ lot, item }) => ({
    itemId: item.id,
    name: item.name,
    sku: item.sku,
    lotNumber: lot.lot_number,
    expiresOn: lot.expires_on!,
    quantity: lot.quantity,
    status: lot.status,
  }));
  for (const address of recipients) {
    await queueEmail(trx, {
      to: address,
      subject: expirySubject(lots),
      template: 'expiry-digest',
      data: { lots, warningDays, since: last?.lastRunAt.toISOString() ?? null },
    });
  }
  return { outcome: 'queued', lots: lots.length, recipients };
}
