/**
 * The outbound webhooks' part in a restore (issue 40; the backups module runs it, see
 * backups.carry.ts): an endpoint both hold keeps the secret it had before the restore, its newest,
 * so a secret rotated after the backup (perhaps because it leaked) does not come back.
 */
export function webhookSecretsCarry(schema: string): { save: string; apply: string } {
  return {
    save: `CREATE TABLE ${schema}.outbound_webhook_secrets AS SELECT id, secret FROM public.outbound_webhooks;`,
    apply: `DO $$
BEGIN
  IF to_regclass('public.outbound_webhooks') IS NULL OR to_regclass('${schema}.outbound_webhook_secrets') IS NULL THEN RETURN; END IF;
  UPDATE public.outbound_webhooks restored SET secret = kept.secret
    FROM ${schema}.outbound_webhook_secrets kept
   WHERE kept.id = restored.id AND kept.secret IS DISTINCT FROM restored.secret;
END $$;`,
  };
}
