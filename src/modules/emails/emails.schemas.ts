import { z } from 'zod';
import '../../http/openapi';

const Switch = (description: string) => z.boolean({ error: 'must be a boolean' }).optional().openapi({ description });

/** A person's email switches (My account): only those their role has appear. */
export const EmailPreferences = z
  .object({
    lowStockDigest: Switch(
      "Managers and admins: the daily low-stock digest, and the stores' request inbox emails (a request ready to fulfil) (on unless switched off).",
    ),
    expiryDigest: Switch(
      'Managers and admins: the daily expiry digest, the lots that became expiring or expired, sent with the low-stock digest to those who keep that on (on unless switched off).',
    ),
    orderReceived: Switch('Everyone: an email when an order you created is received (on unless switched off).'),
    backupAlerts: Switch('Admins: an email when a scheduled backup fails or is overdue (on unless switched off).'),
  })
  .openapi('EmailPreferences');
export type EmailPreferences = z.infer<typeof EmailPreferences>;

/** The switches to change; the others stay. A switch the person's role does not have is a 400 naming it. */
export const EmailPreferencesBody = EmailPreferences.openapi('EmailPreferencesChange');
