import type { Knex } from 'knex';
import { sql, toRaw } from '../../db/sql';
import { categoryBuyers } from '../categories/categories.queries';
import { lowStockQuery, toLowStockItem, type LowStockRow } from '../items/items.queries';
import { queueEmail } from '../outbox/outbox.queries';
import { KNOWN_SETTINGS } from '../settings/settings.schemas';
import { settingsService } from '../settings/settings.service';
import { crossedDownTo, lastMovementIdAt } from '../stock-movements/stock-movements.queries';
import { emailRecipients, namedRecipients } from '../emails/emails.service';
import { lastEmailRun, recordEmailRun } from '../emails/emails.queries';

/** The setting that says when the digest goes out (UK time); unset, DEFAULT_DIGEST_TIME. */
export const DIGEST_TIME_SETTING = 'notifications.digestTime';
export const DEFAULT_DIGEST_TIME = '07:00';
/** The clock the digest time is read on (the pages show UK time). */
const DIGEST_TIME_ZONE = 'Europe/London';
const RUN = 'low-stock-digest';

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
