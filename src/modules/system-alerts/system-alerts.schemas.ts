import { z } from 'zod';
import '../../http/openapi';

export const SystemAlert = z.object({ type: z.string(), level: z.enum(['warning', 'critical']), message: z.string() });
export type SystemAlert = z.infer<typeof SystemAlert>;

export const SystemAlerts = z
  .object({
    alertCount: z.number().int(),
    alerts: z.array(SystemAlert),
    hasSystemAlerts: z.boolean(),
    ledgerCheckedAt: z
      .string()
      .datetime()
      .openapi({
        description:
          'when the whole stock ledger was last reconciled (a scheduled check every 15 minutes and shortly after start); ' +
          'stock_ledger_mismatch reports what that check found, less the items put right since',
      }),
  })
  .openapi('SystemAlerts');
export type SystemAlerts = z.infer<typeof SystemAlerts>;
