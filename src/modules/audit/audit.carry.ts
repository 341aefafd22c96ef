/**
 * The audit trail's part in a restore (the backups module runs it, see backups.carry.ts): every
 * row is copied aside before the backup replaces the tables, and afterwards each row the backup
 * does not hold (the same id; the trail is append-only, so a row with that id is that row) goes
 * back with its id and time. Only the columns both versions of the table have are copied, so a
 * backup made before a migration that changed the table still takes its rows.
 */
export function auditTrailCarry(schema: string): { save: string; apply: string } {
  return {
    save: `CREATE TABLE ${schema}.audit_log AS TABLE public.audit_log;`,
    apply: `DO $$
DECLARE
  shared_columns text;
BEGIN
  IF to_regclass('public.audit_log') IS NULL OR to_regclass('${schema}.audit_log') IS NULL THEN RETURN; END IF;
  SELECT string_agg(format('%I', restored.column_name), ', ' ORDER BY restored.ordinal_position) INTO shared_columns
    FROM information_schema.columns restored
    JOIN information_schema.columns kept ON kept.table_schema = '${schema}' AND kept.table_name = 'audit_log' AND kept.column_name = restored.column_name
   WHERE restored.table_schema = 'public' AND restored.table_name = 'audit_log';
  EXECUTE format('INSERT INTO public.audit_log (%1$s) SELECT %1$s FROM ${schema}.audit_log ORDER BY id ON CONFLICT (id) DO NOTHING', shared_columns);
END $$;`,
  };
}
