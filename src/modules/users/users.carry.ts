/**
 * The people's credentials and roles in a restore (issue 40; the backups module runs it, see
 * backups.carry.ts): a person both hold keeps the password they had before the restore, their
 * newest (a password changed after the backup, perhaps because it leaked, does not come back), and
 * a person deactivated after the backup stays deactivated. Their role is the one they had before
 * the restore: a role taken away after the backup does not come back, and the admin who restores
 * stays an admin. The rest of their record is the backup's.
 */
export function userCredentialsCarry(schema: string): { save: string; apply: string } {
  return {
    save: `CREATE TABLE ${schema}.user_credentials AS SELECT id, password_hash, is_active, role FROM public.users;`,
    apply: `DO $$
BEGIN
  IF to_regclass('public.users') IS NULL OR to_regclass('${schema}.user_credentials') IS NULL THEN RETURN; END IF;
  UPDATE public.users restored
     SET password_hash = kept.password_hash, is_active = restored.is_active AND kept.is_active
    FROM ${schema}.user_credentials kept
   WHERE kept.id = restored.id
     AND (kept.password_hash IS DISTINCT FROM restored.password_hash OR (restored.is_active AND NOT kept.is_active));
  -- a backup older than a role (requester) refuses it until its migrations have run: the second apply sets it
  BEGIN
    UPDATE public.users restored
       SET role = kept.role
      FROM ${schema}.user_credentials kept
     WHERE kept.id = restored.id AND kept.role IS DISTINCT FROM restored.role;
  EXCEPTION WHEN check_violation THEN NULL;
  END;
END $$;`,
  };
}
