import type { Knex } from 'knex';
import { hashPassword } from '../src/auth/passwords';

const DAY = 86_400_000;

/** Demo charge codes: two in use, one expiring within the month, one on hold. */
export async function seed(knex: Knex): Promise<void> {
  const now = Date.now();
  const codes = [
    { code: 'CHEM-2026-001', title: 'Chemistry teaching labs', cost_centre: 'Chemistry', from: -180, until: 365, pin: '1234' },
    { code: 'PHYS-2026-014', title: 'Physics research group', cost_centre: 'Physics', from: -90, until: 540 },
    { code: 'BIO-2025-077', title: 'Biology field course', cost_centre: 'Biology', from: -300, until: 12 },
    {
      code: 'ENG-2026-003',
      title: 'Engineering workshop',
      cost_centre: 'Engineering',
      from: -60,
      until: 300,
      on_hold: true,
      hold_reason: 'Budget under review by finance',
    },
  ];
  for (const c of codes) {
    await knex('charge_codes')
      .insert({
        code: c.code,
        title: c.title,
        cost_centre: c.cost_centre,
        valid_from: new Date(now + c.from * DAY),
        valid_until: new Date(now + c.until * DAY),
        pin_hash: c.pin ? await hashPassword(c.pin) : null,
        on_hold: c.on_hold ?? false,
        hold_reason: c.hold_reason ?? null,
      })
      .onConflict('code')
      .ignore();
  }
}
