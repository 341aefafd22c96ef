/**
 * The MCP keys' part in a restore (issue 40; the backups module runs it, see backups.carry.ts): a
 * key the backup holds that is gone from the database being replaced was deleted (or went with its
 * creator) after the backup, so it stays gone. Ids are never issued twice (the sequences are carried
 * too), so a key with the same id is the same key. Keys made after the backup go with the rest of
 * what the backup lacks.
 */
export function mcpKeyRevocationsCarry(schema: string): { save: string; apply: string } {
  return {
    save: `CREATE TABLE ${schema}.mcp_api_key_ids AS SELECT id FROM public.mcp_api_keys;`,
    apply: `DO $$
BEGIN
  IF to_regclass('public.mcp_api_keys') IS NULL OR to_regclass('${schema}.mcp_api_key_ids') IS NULL THEN RETURN; END IF;
  DELETE FROM public.mcp_api_keys restored WHERE NOT EXISTS (SELECT 1 FROM ${schema}.mcp_api_key_ids kept WHERE kept.id = restored.id);
END $$;`,
  };
}
