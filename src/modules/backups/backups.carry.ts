import type { Db } from '../../db/knex';
import { apiTokenRevocationsCarry } from '../../auth/tokens.carry';
import { auditTrailCarry } from '../audit/audit.carry';
import { chargeCodePinsCarry } from '../chargecodes/chargecodes.carry';
import { saleNumberCarry } from '../sales/sales.carry';
import { mcpKeyRevocationsCarry } from '../mcp-keys/mcp-keys.carry';
import { webhookSecretsCarry } from '../outbound-webhooks/outbound-webhooks.carry';
import { userCredentialsCarry } from '../users/users.carry';

/** Where a restore keeps, inside its own transaction, what must outlive the backup's contents; never in a backup. */
export const CARRY_SCHEMA = 'restore_carry';

/**
 * Something a restore carries across: `save` copies it into CARRY_SCHEMA before the public schema
 * is dropped; `apply` puts it into the restored database. `apply` is idempotent and skips what
 * the restored database lacks, because it runs twice: inside the restore's transaction (so no
 * instance ever sees the restored tables without it) and again after the migrations the backup
 * predates, which may create what it needs (a sequence or table newer than the backup).
 */
type RestoreCarry = { save: string; apply: string };

/**
 * Every sequence of the public schema continues from the highest value it ever gave out, before
 * the restore or in the backup: a quote or order number (and any record id, which links,
 * receipts and the kept audit trail name) is never issued twice. nextval never goes back, not even
 * in a rolled-back transaction, so a sequence's value before the restore is at least every number
 * it issued. All sequences rather than a list, so a sequence a later migration adds is covered.
 */
const SEQUENCES: RestoreCarry = {
  save: `CREATE TABLE ${CARRY_SCHEMA}.sequences AS
  SELECT sequencename AS name, last_value FROM pg_sequences WHERE schemaname = 'public' AND last_value IS NOT NULL;`,
  apply: `SELECT setval(format('public.%I', restored.sequencename), kept.last_value)
  FROM ${CARRY_SCHEMA}.sequences kept
  JOIN pg_sequences restored ON restored.schemaname = 'public' AND restored.sequencename = kept.name
 WHERE restored.last_value IS NULL OR restored.last_value < kept.last_value;`,
};

/** What a restore carries across; the one list to extend. */
const CARRIES: RestoreCarry[] = [
  SEQUENCES,
  saleNumberCarry(CARRY_SCHEMA),
  auditTrailCarry(CARRY_SCHEMA),
  // revoked credentials stay revoked, rotated secrets keep their newest value (issue 40)
  apiTokenRevocationsCarry(CARRY_SCHEMA),
  mcpKeyRevocationsCarry(CARRY_SCHEMA),
  webhookSecretsCarry(CARRY_SCHEMA),
  userCredentialsCarry(CARRY_SCHEMA),
  chargeCodePinsCarry(CARRY_SCHEMA),
];

/** For the restore script, after its locks and before it drops the public schema (a leftover of a failed restore is replaced). */
export const SAVE_CARRIES =
  `DROP SCHEMA IF EXISTS ${CARRY_SCHEMA} CASCADE;\nCREATE SCHEMA ${CARRY_SCHEMA};\n` +
  CARRIES.map((carry) => carry.save).join('\n') +
  '\n';

/** For the restore script, after pg_restore's output and before its COMMIT. */
export const APPLY_CARRIES = CARRIES.map((carry) => carry.apply).join('\n') + '\n';

/** After the migrations that followed a restore: applies the carries again, then drops what they kept. */
export async function finishCarries(db: Db): Promise<void> {
  await db.raw(APPLY_CARRIES);
  await db.raw(`DROP SCHEMA ${CARRY_SCHEMA} CASCADE`);
}
