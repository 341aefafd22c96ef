import { z } from 'zod';
import '../../http/openapi';

export const SystemAlert = z.object({ type: z.string(), level: z.enum(['warning', 'critical']), message: z.string() });
export type SystemAlert = z.infer<typeof SystemAlert>;

export const SystemAlerts = z
  .object({ alertCount: z.number().int(), alerts: z.array(SystemAlert), hasSystemAlerts: z.boolean() })
  .openapi('SystemAlerts');
export type SystemAlerts = z.infer<typeof SystemAlerts>;
