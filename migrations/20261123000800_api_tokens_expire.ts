import type { Knex } from 'knex';

// Every API token expires. Tokens made before expiry existed have none: they get the default
// lifetime (90 days, as TOKEN_DEFAULT_DAYS was when this was written) from the migration's run,
// and the column refuses a token without one from now on.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`UPDATE api_tokens SET expires_at = now() + interval '90 days' WHERE expires_at IS NULL`);
  await knex.raw('ALTER TABLE api_tokens ALTER COLUMN expires_at SET NOT NULL');
}

// The expiries given stay: which tokens had none is not kept.
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE api_tokens ALTER COLUMN expires_at DROP NOT NULL');
}
