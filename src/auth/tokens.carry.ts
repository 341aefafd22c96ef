/**
 * The API tokens' part in a restore (issue 40; the backups module runs it, see backups.carry.ts):
 * a token the backup holds that is gone from the database being replaced was revoked (or ended by
 * a password change or its owner's removal) after the backup, so it stays gone. Ids are never
 * issued twice (the sequences are carried too), so a token with the same id is the same token.
 * Tokens made after the backup go with the rest of what the backup lacks.
 */
export function apiTokenRevocationsCarry(schema: string): { save: string; apply: string } {
  return {
    save: `CREATE TABLE ${schema}.api_token_ids AS SELECT id FROM public.api_tokens;`,
    apply: `DO $$
BEGIN
  IF to_regclass('public.api_tokens') IS NULL OR to_regclass('${schema}.api_token_ids') IS NULL THEN RETURN; END IF;
  DELETE FROM public.api_tokens restored WHERE NOT EXISTS (SELECT 1 FROM ${schema}.api_token_ids kept WHERE kept.id = restored.id);
END $$;`,
  };
}
