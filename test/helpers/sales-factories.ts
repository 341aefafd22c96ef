import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';

const unique = () => randomBytes(4).toString('hex').toUpperCase();
const DAY = 86_400_000;

export type ChargeCodeFactoryRow = { id: number; code: string; title: string; cost_centre: string };

/** A charge code valid from yesterday for a year unless told otherwise. */
export async function buildChargeCode(
  db: Knex,
  overrides: Partial<{
    code: string;
    title: string;
    costCentre: string;
    validFrom: Date;
    validUntil: Date;
    onHold: boolean;
    holdReason: string | null;
    excludedCategoryIds: number[];
    approverEmail: string | null;
    approvalThreshold: string | null;
    /** emails of its authorised users (issue 33: the codes a requester may charge) */
    authorisedEmails: string[];
  }> = {},
): Promise<ChargeCodeFactoryRow> {
  const [row] = await db('charge_codes')
    .insert({
      code: overrides.code ?? `CC-${unique()}`,
      title: overrides.title ?? 'Test budget',
      cost_centre: overrides.costCentre ?? 'Chemistry',
      valid_from: overrides.validFrom ?? new Date(Date.now() - DAY),
      valid_until: overrides.validUntil ?? new Date(Date.now() + 365 * DAY),
      on_hold: overrides.onHold ?? false,
      hold_reason: overrides.holdReason ?? null,
      approver_email: overrides.approverEmail ?? null,
      approval_threshold: overrides.approvalThreshold ?? null,
    })
    .returning('*');
  for (const email of overrides.authorisedEmails ?? []) {
    await db('charge_code_authorised_users').insert({
      charge_code_id: row.id,
      user_name: email.split('@')[0],
      email,
      department: 'Chemistry',
    });
  }
  for (const categoryId of overrides.excludedCategoryIds ?? []) {
    await db('charge_code_exclusions').insert({ charge_code_id: row.id, category_id: categoryId });
  }
  return row;
}

export async function grantPermission(db: Knex, userId: string, permission: string) {
  await db('user_permissions').insert({ user_id: userId, permission });
}

export const sessionId = () => `session-${unique()}`;

/** Returns once a session of this test's database waits on a lock (the request under test is blocked), or after 2 s. */
export async function untilSomeoneWaitsOnALock(db: Knex): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    const { rows } = await db.raw(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
    );
    if (rows[0].n > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}
