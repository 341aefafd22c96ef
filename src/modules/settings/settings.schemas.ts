import { z } from 'zod';
import '../../http/openapi';
import { STAFF_ROLES } from '../../auth/roles';
import { User } from '../users/users.schemas';

export const Permission = z
  .object({ key: z.string(), name: z.string(), description: z.string() })
  .openapi('Permission');
export type Permission = z.infer<typeof Permission>;
export const PermissionList = z.array(Permission);

export const UserPermissions = User.extend({
  /** keys granted to the user explicitly */
  permissions: z.array(z.string()),
  /** what the user may do: the granted keys, or every key for an admin */
  effectivePermissions: z.array(z.string()),
}).openapi('UserWithPermissions');
export type UserPermissions = z.infer<typeof UserPermissions>;
export const UserPermissionsList = z.array(UserPermissions);

export const PermissionParams = z.object({
  userId: z.string().uuid({ error: 'must be a user id (uuid)' }),
  permission: z.string().min(1),
});

export const GrantBody = z.object({ granted: z.boolean({ error: 'must be a boolean' }) });

export const SettingKeyParams = z.object({
  key: z.string().regex(/^[a-zA-Z][\w.-]{0,99}$/, 'must be a setting key (letters, digits, ".", "_" or "-")'),
});
export const SettingBody = z.object({ value: z.record(z.string(), z.unknown(), { error: 'must be a JSON object' }) });

const PolicySwitch = z.object({ enabled: z.boolean({ error: 'must be a boolean' }) }).strict();

const AccountCode = z
  .string({ error: 'must be an account code' })
  .trim()
  .min(1, { error: 'must not be empty' })
  .max(40);

/** A list of email addresses in a setting: at most 20, kept lower case and each once. */
const EmailList = z
  .array(z.string().trim().toLowerCase().email({ error: 'must be an email address' }).max(254), {
    error: 'must be a list of email addresses',
  })
  .max(20, { error: 'must list at most 20 addresses' })
  .transform((emails) => [...new Set(emails)]);

/** spec: the interface's access; strict: the actions the interface leaves to any user need a manager (src/auth/access-profile.ts) */
export const ACCESS_PROFILES = ['spec', 'strict'] as const;
export type AccessProfile = (typeof ACCESS_PROFILES)[number];

/** The longest an MCP key may live: neither the mcp.keyMaxLifetimeDays setting nor a key's request may exceed it. */
export const MCP_KEY_LIMIT_DAYS = 3650;

/**
 * Settings the service reads, with the value each must have (a PUT of another value is a 400).
 * Unset, the spec's behaviour stays.
 */
export const KNOWN_SETTINGS = {
  /** the lowest role that may place or lift a hold and change exclusions */
  'chargeCodes.holdRole': z
    .object({ role: z.enum(STAFF_ROLES, { error: `must be one of ${STAFF_ROLES.join(', ')}` }) })
    .strict(),
  /** a sale on a code that has a PIN needs the PIN in the request */
  'chargeCodes.requirePin': PolicySwitch,
  /** a sale's recipient email must be one of the code's authorised users */
  'chargeCodes.requireAuthorisedUser': PolicySwitch,
  /** the ledger account code of a recharge journal line: its item's category's (by id or name), else the default */
  'finance.accountCodes': z
    .object({
      default: AccountCode,
      byCategory: z
        .record(z.string().trim().min(1, { error: 'must be a category id or name' }).max(200), AccountCode)
        .default({}),
    })
    .strict(),
  /** who may import items, keep suppliers and sources, set any sale's recipient, export the catalogue, read cost prices and invoices */
  'access.profile': z
    .object({ profile: z.enum(ACCESS_PROFILES, { error: `must be one of ${ACCESS_PROFILES.join(', ')}` }) })
    .strict(),
  /** the markup on unit cost that proposes a new item's sale price when an order line is received as one */
  'purchasing.defaultMarkup': z
    .object({
      percent: z
        .number({ error: 'must be a number' })
        .min(0, { error: 'must be 0 or more' })
        .max(1000, { error: 'must be at most 1000' }),
    })
    .strict(),
  /** the stores' delivery address (several lines) and contact, printed on a purchase order */
  'purchasing.deliveryAddress': z
    .object({
      address: z.string({ error: 'must be text' }).trim().min(1, { error: 'is required' }).max(1000),
      contact: z.string({ error: 'must be text' }).trim().max(300).optional(),
    })
    .strict(),
  /** the longest an MCP key may live, in days (unset: MCP_KEY_MAX_DAYS) */
  'mcp.keyMaxLifetimeDays': z
    .object({ days: z.number({ error: 'must be a whole number of days' }).int().min(1).max(MCP_KEY_LIMIT_DAYS) })
    .strict(),
  /** when the daily low-stock digest is emailed, UK time (unset: 07:00) */
  'notifications.digestTime': z
    .object({
      time: z
        .string({ error: 'must be a time HH:MM' })
        .regex(/^([01]\d|2[0-3]):[0-5]\d$/, { error: 'must be a time HH:MM (00:00 to 23:59)' }),
    })
    .strict(),
  /** how many days before its expiry a lot counts as expiring (unset: 30) */
  'lots.expiryWarningDays': z
    .object({ days: z.number({ error: 'must be a whole number of days' }).int().min(1).max(365) })
    .strict(),
  /** how many years a safety data sheet stays current: a hazardous item's older one is counted in the sds_missing_or_old alert (unset: 5) */
  'safety.sdsReviewYears': z
    .object({ years: z.number({ error: 'must be a whole number of years' }).int().min(1).max(50) })
    .strict(),
  /** the stores' request inbox: who is emailed when a request is ready to fulfil (unset or []: the managers) */
  'requests.notifyEmails': z.object({ emails: EmailList }).strict(),
  /** the domains (and their subdomains) a receipt may be emailed to (unset: the domains of the active users' addresses) */
  'email.recipientDomains': z
    .object({
      domains: z
        .array(
          z
            .string({ error: 'must be a domain name' })
            .trim()
            .toLowerCase()
            .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, {
              error: 'must be a domain name, e.g. example.ac.uk',
            }),
        )
        .min(1, { error: 'must name at least one domain' })
        .max(100),
    })
    .strict(),
  /** how many receipts one person may have emailed an hour (unset: 20) */
  'email.receiptsPerHour': z
    .object({ count: z.number({ error: 'must be a whole number' }).int().min(1).max(1000) })
    .strict(),
  /** what a code's approval threshold is held against: the one request, or the requester's open requests on the code over a rolling day or week (unset: day) */
  'requests.thresholdWindow': z
    .object({ window: z.enum(['request', 'day', 'week'], { error: 'must be one of request, day, week' }) })
    .strict(),
} satisfies Record<string, z.ZodType>;
export type KnownSetting = keyof typeof KNOWN_SETTINGS;
export const isKnownSetting = (key: string): key is KnownSetting => Object.hasOwn(KNOWN_SETTINGS, key);
export const Setting = z
  .object({
    key: z.string(),
    value: z.record(z.string(), z.unknown()),
    updatedAt: z.string(),
    updatedBy: z.string().nullable(),
  })
  .openapi('Setting');
export type Setting = z.infer<typeof Setting>;
export const SettingList = z.array(Setting);

/** The body of PUT /api/settings/{key}: a known setting's own value schema, any JSON object otherwise. */
export const settingBodyFor = (key: string) =>
  isKnownSetting(key) ? z.object({ value: KNOWN_SETTINGS[key] }) : SettingBody;
