import type { Knex } from 'knex';

// Who placed a charge code's hold, at what role and when: a hold is released only by someone at
// least as senior. The placer is copied, not referenced (as the audit trail's actors are), so a
// hold outlives its placer's account and the role is the one they had when they placed it.
// A code not on hold has no placer; a hold has all four or none (a hold placed before this
// migration whose placer is not known, which the chargeCodes.holdRole role releases as before).
//
// Existing holds take their placer from the audit trail: the latest 'hold' event of the code, if
// its user still exists, at that user's role now (the trail does not keep roles; today's role is
// the best evidence, and it errs towards protecting a hold an admin placed).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('charge_codes', (t) => {
    t.uuid('hold_placed_by');
    t.text('hold_placed_by_name');
    t.text('hold_placed_by_role');
    t.timestamp('hold_placed_at', { useTz: true });
  });
  await knex.raw(`
    ALTER TABLE charge_codes ADD CONSTRAINT charge_codes_hold_placer CHECK (
      (hold_placed_by IS NULL AND hold_placed_by_name IS NULL AND hold_placed_by_role IS NULL AND hold_placed_at IS NULL)
      OR (on_hold AND hold_placed_by IS NOT NULL AND hold_placed_by_name IS NOT NULL
          AND hold_placed_by_role IN ('user', 'manager', 'admin') AND hold_placed_at IS NOT NULL))`);
  await knex.raw(`
    UPDATE charge_codes cc
       SET hold_placed_by = u.id,
           hold_placed_by_name = u.first_name || ' ' || u.last_name,
           hold_placed_by_role = u.role,
           hold_placed_at = placed.occurred_at
      FROM (SELECT DISTINCT ON (entity_id) entity_id, actor_user_id, occurred_at
              FROM audit_log
             WHERE entity_type = 'charge_code' AND action = 'hold'
             ORDER BY entity_id, occurred_at DESC, id DESC) placed
      JOIN users u ON u.id = placed.actor_user_id
     WHERE cc.on_hold AND placed.entity_id = cc.code`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('charge_codes', (t) => {
    t.dropChecks(['charge_codes_hold_placer']);
    t.dropColumns('hold_placed_by', 'hold_placed_by_name', 'hold_placed_by_role', 'hold_placed_at');
  });
}
