import type { Knex } from 'knex';

// The audit trail: one row per change that is not already a stock movement, written in the
// change's own transaction. Append-only: triggers refuse UPDATE, DELETE and TRUNCATE, so no code
// path of the app can rewrite history. Actors are copied, not referenced, so a row outlives the
// user, token or key it names (a foreign key would have to be cleared, which the trigger refuses).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE audit_log (
      id bigserial PRIMARY KEY,
      occurred_at timestamptz NOT NULL DEFAULT now(),
      actor_kind text NOT NULL CHECK (actor_kind IN ('session', 'token', 'mcp-key', 'system', 'anonymous')),
      actor_user_id uuid,
      actor_email text,
      actor_mcp_key_id integer,
      actor_ip text,
      entity_type text NOT NULL,
      entity_id text,
      action text NOT NULL,
      before jsonb,
      after jsonb
    )`);
  await knex.raw('CREATE INDEX audit_log_occurred ON audit_log (occurred_at DESC, id DESC)');
  await knex.raw('CREATE INDEX audit_log_entity ON audit_log (entity_type, entity_id, occurred_at DESC)');
  await knex.raw('CREATE INDEX audit_log_actor ON audit_log (actor_user_id, occurred_at DESC)');
  await knex.raw(`
    CREATE FUNCTION audit_log_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
    END $$`);
  await knex.raw(`
    CREATE TRIGGER audit_log_no_update_or_delete BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_is_append_only()`);
  await knex.raw(`
    CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_is_append_only()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE audit_log');
  await knex.raw('DROP FUNCTION audit_log_is_append_only()');
}
