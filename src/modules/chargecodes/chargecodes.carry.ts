/**
 * The charge codes' part in a restore (issue 40, finding 7; the backups module runs it, see
 * backups.carry.ts): a code both hold keeps the PIN it had before the restore, its newest, so a
 * PIN changed or removed after the backup (perhaps because it leaked) does not come back. Ids are
 * never issued twice (the sequences are carried too), so a code with the same id is the same code.
 * The rest of the code's record is the backup's.
 */
export function chargeCodePinsCarry(schema: string): { save: string; apply: string } {
  return {
    save: `CREATE TABLE ${schema}.charge_code_pins AS SELECT id, pin_hash FROM public.charge_codes;`,
    apply: `DO $$
BEGIN
  IF to_regclass('public.charge_codes') IS NULL OR to_regclass('${schema}.charge_code_pins') IS NULL THEN RETURN; END IF;
  UPDATE public.charge_codes restored SET pin_hash = kept.pin_hash
    FROM ${schema}.charge_code_pins kept
   WHERE kept.id = restored.id AND kept.pin_hash IS DISTINCT FROM restored.pin_hash;
END $$;`,
  };
}
