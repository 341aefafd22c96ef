import type { Role } from '../../auth/roles';

/**
 * The emails a person can switch on or off on My account: who may have each (by role), whether it
 * is on until they choose, and the templates it sends. A sale's receipt is not among them: the
 * counter ticks it per sale.
 */
export const EMAIL_SWITCHES = {
  lowStockDigest: {
    label: 'Low-stock digest',
    hint:
      'Once a day, the items that fell to their minimum, when a category you buy for (or, with no buyer named, any) has some; ' +
      "and, when you are the stores' request inbox, each request ready to fulfil.",
    describe: 'the low-stock digest',
    column: 'low_stock_digest',
    roles: ['manager', 'admin'],
    onByDefault: ['manager', 'admin'],
    templates: ['low-stock-digest', 'request-to-fulfil'],
  },
  expiryDigest: {
    label: 'Expiry digest',
    hint: 'Once a day, at the time of the low-stock digest (and only with it on), the lots that became expiring or expired since the last digest.',
    describe: 'the expiry digest',
    column: 'expiry_digest',
    roles: ['manager', 'admin'],
    onByDefault: ['manager', 'admin'],
    templates: ['expiry-digest'],
  },
  orderReceived: {
    label: 'Order received',
    hint: 'When an order you placed is received.',
    describe: 'order received emails',
    column: 'order_received',
    roles: ['user', 'manager', 'admin'],
    onByDefault: ['user', 'manager', 'admin'],
    templates: ['order-received'],
  },
  backupAlerts: {
    label: 'Backup failed or overdue',
    hint: 'When a scheduled backup fails, or none has succeeded for longer than the schedule allows.',
    describe: 'backup alerts',
    column: 'backup_alerts',
    roles: ['admin'],
    onByDefault: ['admin'],
    templates: ['backup-failed', 'backup-overdue'],
  },
} as const satisfies Record<
  string,
  {
    label: string;
    hint: string;
    describe: string;
    column: string;
    roles: readonly Role[];
    onByDefault: readonly Role[];
    templates: readonly string[];
  }
>;

export type EmailSwitch = keyof typeof EMAIL_SWITCHES;
export const EMAIL_SWITCH_NAMES = Object.keys(EMAIL_SWITCHES) as EmailSwitch[];

/** The switch that governs a template's emails, if one does. */
export function switchOfTemplate(template: string): (typeof EMAIL_SWITCHES)[EmailSwitch] | undefined {
  return Object.values(EMAIL_SWITCHES).find((s) => (s.templates as readonly string[]).includes(template));
}

/** The switches a role has (the others do not apply to it). */
export const switchesOf = (role: Role): EmailSwitch[] =>
  EMAIL_SWITCH_NAMES.filter((name) => (EMAIL_SWITCHES[name].roles as readonly Role[]).includes(role));

/** Whether a switch is on for a role when the person has not chosen. */
export const onByDefault = (name: EmailSwitch, role: Role): boolean =>
  (EMAIL_SWITCHES[name].onByDefault as readonly Role[]).includes(role);
