import type { Knex } from 'knex';
import { hashPassword } from '../src/auth/passwords';

const DAY = 86_400_000;

/**
 * Demo charge codes: two in use, one expiring within the month, one on hold. The hold is finance's,
 * placed by the first admin (when there is one), so only an admin can release it.
 */
export async function seed(knex: Knex): Promise<void> {
  const now = Date.now();
  const admin = await knex('users')
    .where({ role: 'admin', is_active: true })
    .orderBy('created_at')
    .first('id', 'first_name', 'last_name');
  const placedByAdmin = admin
    ? {
        hold_placed_by: admin.id,
        hold_placed_by_name: `${admin.first_name} ${admin.last_name}`,
        hold_placed_by_role: 'admin',
        hold_placed_at: new Date(now),
      }
    : {};
  const codes = [
    {
      code: 'CHEM-2026-001',
      title: 'Chemistry teaching labs',
      cost_centre: 'Chemistry',
      from: -180,
      until: 365,
      pin: '1234',
    },
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
        ...(c.on_hold ? placedByAdmin : {}),
      })
      .onConflict('code')
      .ignore();
  }
}
