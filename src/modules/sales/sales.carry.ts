/**
 * The sale-number counters' part in a restore (the backups module runs it, see backups.carry.ts;
 * issue 39): each day's counter continues from the highest number it gave out, before the restore
 * or in the backup, so a sale number already on a receipt is never issued again. A counter only
 * moves up in a committed sale, so its value before the restore is the last number issued that day.
 */
export function saleNumberCarry(schema: string): { save: string; apply: string } {
  return {
    save: `CREATE TABLE ${schema}.sale_number_counters AS TABLE public.sale_number_counters;`,
    apply: `DO $$
BEGIN
  IF to_regclass('public.sale_number_counters') IS NULL OR to_regclass('${schema}.sale_number_counters') IS NULL THEN RETURN; END IF;
  INSERT INTO public.sale_number_counters AS c (day, last_number)
  SELECT day, last_number FROM ${schema}.sale_number_counters
  ON CONFLICT (day) DO UPDATE SET last_number = greatest(c.last_number, excluded.last_number);
END $$;`,
  };
}
