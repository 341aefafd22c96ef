import type { Request, Response, Router } from 'express';
import type { Deps } from '../deps';
import { NotFound } from '../http/errors';
import { z } from 'zod';
import { IdParams } from '../http/validate';
import { actorOf } from '../modules/audit/audit.actor';
import { chargeCodePolicy, type ChargeCodePolicy } from '../modules/chargecodes/chargecodes.policy';
import { presentCreatedMcpKey, presentMcpKey } from '../modules/mcp-keys/mcp-keys.present';
import { CreateMcpKey, MCP_KEY_DEFAULT_DAYS, type McpKey } from '../modules/mcp-keys/mcp-keys.schemas';
import { mcpKeysService } from '../modules/mcp-keys/mcp-keys.service';
import { presentSetting } from '../modules/settings/settings.present';
import {
  isKnownSetting,
  KNOWN_SETTINGS,
  settingBodyFor,
  SettingBody,
  SettingKeyParams,
  type AccessProfile,
  type KnownSetting,
} from '../modules/settings/settings.schemas';
import { accessProfile } from '../auth/access-profile';
import { UpdateCategory } from '../modules/categories/categories.schemas';
import { categoriesService } from '../modules/categories/categories.service';
import { settingsService } from '../modules/settings/settings.service';
import { STAFF_ROLES } from '../auth/roles';
import { usersService } from '../modules/users/users.service';
import { presentVatRate, presentVatRateList } from '../modules/vat-rates/vat-rates.present';
import { CreateVatRate, RateIdParams, UpdateVatRate, type VatRate } from '../modules/vat-rates/vat-rates.schemas';
import { vatRatesService } from '../modules/vat-rates/vat-rates.service';
import { attempt, checked, filledIn, flash, formState, textField, type FieldErrors, type ReturnedForm } from './forms';
import { PageRouter } from './page-route';

/** What each setting the service reads does, and the shape of its value (the schema in KNOWN_SETTINGS checks it). */
const SETTING_MEANINGS: Record<KnownSetting, { meaning: string; example: string }> = {
  'chargeCodes.holdRole': {
    meaning:
      'The lowest role that may place or lift a hold on a charge code and change its excluded categories. Not set: every user may. ' +
      'On top of it, a hold is changed or released only by someone at least as senior as who placed it.',
    example: '{"role": "manager"}',
  },
  'chargeCodes.requirePin': {
    meaning: 'When enabled, a sale against a charge code that has a PIN needs the PIN. Not set: off.',
    example: '{"enabled": true}',
  },
  'chargeCodes.requireAuthorisedUser': {
    meaning: "When enabled, a sale's recipient email must be one of the charge code's authorised users. Not set: off.",
    example: '{"enabled": true}',
  },
  'finance.accountCodes': {
    meaning:
      "The ledger account code of each line of a recharge batch's journal: the code of its item's category (keyed by the category's id or name), " +
      'otherwise the default. Not set: the journal leaves Account code empty.',
    example: '{"default": "5000", "byCategory": {"Chemicals": "5020", "12": "5030"}}',
  },
  'access.profile': {
    meaning:
      'Who may do what the interface leaves to any signed-in user. spec: everyone signed in may import items with stock, create and edit suppliers, ' +
      "link items and mark a preferred source, set any sale's recipient, export the catalogue, and see supplier prices, order costs and invoice PDFs. " +
      "strict: those need a manager (a sale's recipient: its processor or a manager). Not set: spec.",
    example: '{"profile": "strict"}',
  },
  'purchasing.defaultMarkup': {
    meaning:
      'The markup on unit cost (a percentage) that proposes the sale price of a new item made from a received order line: cost x (1 + percent / 100), to the penny. The person receiving can change it. Not set: 0 (the price proposed is the cost).',
    example: '{"percent": 25}',
  },
  'purchasing.deliveryAddress': {
    meaning:
      'Where suppliers deliver, printed as "Deliver to" on a purchase order (PDF): the address (lines separated by \\n) and a contact (name, email or phone). Not set: the service\'s name only.',
    example:
      '{"address": "Chemistry Stores\\nSouth Parks Road\\nOxford OX1 3QR", "contact": "stores@example.ac.uk, 01865 000000"}',
  },
  'lots.expiryWarningDays': {
    meaning:
      'How many days before its expiry date a lot counts as expiring: it is marked on the counter, listed under Lots and counted on the dashboard, and the expiry digest names it. Not set: 30.',
    example: '{"days": 60}',
  },
  'safety.sdsReviewYears': {
    meaning:
      'How many years a safety data sheet stays current: an active hazardous item (any pictogram or H statement) whose latest sheet was revised longer ago than this, or that has none, is counted in the system alert and listed on Safety data sheets due. Not set: 5.',
    example: '{"years": 3}',
  },
  'mcp.keyMaxLifetimeDays': {
    meaning:
      'The longest an MCP key may live, in days: creating a key with a longer expiry is refused, and a key created without one expires after ' +
      '90 days, or this many if fewer. Keys already made keep their expiry. Not set: 365.',
    example: '{"days": 180}',
  },
  'email.recipientDomains': {
    meaning:
      'The domains (and their subdomains) a sale receipt may be emailed to: an address elsewhere is refused, so the service cannot be used to ' +
      "send mail to anyone. Not set: the domains of the active users' addresses.",
    example: '{"domains": ["example.ac.uk"]}',
  },
  'email.receiptsPerHour': {
    meaning:
      'How many sale receipts one person may have emailed in an hour; past it, asking for one is refused until the hour ends. Not set: 20.',
    example: '{"count": 50}',
  },
  'notifications.digestTime': {
    meaning:
      'When the daily low-stock digest is emailed (UK time, HH:MM): the items that fell to their minimum since the last one, to the buyers of ' +
      'each category (or, for a category without buyers, to the managers and admins), each as their switch on My account allows. Not set: 07:00.',
    example: '{"time": "07:30"}',
  },
  'requests.notifyEmails': {
    meaning:
      "The stores' request inbox: who is emailed when a researcher's request is ready to fulfil (submitted under its code's approval threshold, " +
      'or approved). A person named who turned off the low-stock digest on My account is left out. Not set (or []): the managers and admins ' +
      'who keep both the order-received email and the low-stock digest on.',
    example: '{"emails": ["stores@example.ac.uk"]}',
  },
  'requests.thresholdWindow': {
    meaning:
      "What a charge code's approval threshold is held against, so a request split in parts still needs approval: request, the one request's " +
      "total; day or week, that total with the requester's other open requests on the code (submitted, awaiting approval or approved) of the " +
      'last 24 hours or 7 days. Not set: day.',
    example: '{"window": "week"}',
  },
};

const DIGEST_TIME_KEY = 'notifications.digestTime';
const NOTIFY_EMAILS_KEY = 'requests.notifyEmails';
/** The request inbox's addresses a stored value names (none: the managers). */
const notifyEmailsOf = (value: Record<string, unknown> | undefined): string[] => {
  const parsed = KNOWN_SETTINGS[NOTIFY_EMAILS_KEY].safeParse(value);
  return parsed.success ? parsed.data.emails : [];
};
/** The digest time a stored value sets, or the default (07:00, as the digest reads it). */
const digestTimeOf = (value: Record<string, unknown> | undefined): string => {
  const parsed = KNOWN_SETTINGS[DIGEST_TIME_KEY].safeParse(value);
  return parsed.success ? parsed.data.time : '07:00';
};

/** The access profile form's choices: what each profile lets a plain user do. */
const ACCESS_PROFILE_CHOICES: Record<AccessProfile, { label: string; explanation: string }> = {
  spec: {
    label: 'spec: as the interface specifies (the default)',
    explanation:
      'Any signed-in user may import items with stock, create and edit suppliers, link items to suppliers and mark a preferred source (which decides ' +
      "where replenishment orders go), set the recipient of anyone's sale, export the catalogue, and see supplier prices, order costs and invoice PDFs.",
  },
  strict: {
    label: 'strict: these actions are for managers (recommended)',
    explanation:
      'Only managers and admins may do those things; a user may still set the recipient of a sale they processed. Users do not see supplier prices, ' +
      'order costs, invoice PDFs or purchase orders (the API answers those prices null and the PDFs 403).',
  },
};

const ROLE_CHOICES: Record<(typeof STAFF_ROLES)[number], string> = {
  user: 'Every user (the default)',
  manager: 'Managers and admins',
  admin: 'Admins only',
};

/** The charge-code policy form: each field, the setting it saves, the field's value from the form, and the setting's value from the field's. */
const POLICY_FIELDS = {
  holdRole: {
    key: 'chargeCodes.holdRole',
    typed: (body: Record<string, unknown>) => body.holdRole,
    value: (role: unknown) => ({ role }),
  },
  requirePin: {
    key: 'chargeCodes.requirePin',
    typed: (body: Record<string, unknown>) => checked(body.requirePin),
    value: (enabled: unknown) => ({ enabled }),
  },
  requireAuthorisedUser: {
    key: 'chargeCodes.requireAuthorisedUser',
    typed: (body: Record<string, unknown>) => checked(body.requireAuthorisedUser),
    value: (enabled: unknown) => ({ enabled }),
  },
} as const satisfies Record<
  keyof ChargeCodePolicy,
  {
    key: KnownSetting;
    typed: (body: Record<string, unknown>) => unknown;
    value: (typed: unknown) => Record<string, unknown>;
  }
>;
const POLICY_NAMES = Object.keys(POLICY_FIELDS) as (keyof ChargeCodePolicy)[];

/** The policies form: each policy's value as its setting's schema reads it. */
const PolicyForm = z.object(
  Object.fromEntries(POLICY_NAMES.map((field) => [field, settingBodyFor(POLICY_FIELDS[field].key)])) as Record<
    keyof ChargeCodePolicy,
    ReturnType<typeof settingBodyFor>
  >,
);

/** The setting form: a setting's key, then (for a key of the right form) its value as that setting's schema reads it. */
function settingForm(key: unknown) {
  const named = SettingKeyParams.safeParse({ key });
  return named.success
    ? SettingKeyParams.extend(settingBodyFor(named.data.key).shape)
    : // the key is refused on its own: a value the key's schema would judge is not judged here
      SettingKeyParams.extend({ value: SettingBody.shape.value.catch({}) });
}

/** The digest form: its time, and each category's buyers (keyed by the category's id). */
const DigestForm = z.object({
  time: KNOWN_SETTINGS[DIGEST_TIME_KEY],
  buyers: z.record(z.string(), UpdateCategory),
});

/**
 * A setting's value is typed as JSON; text that is not JSON goes to the schema as it is, which
 * answers that the value must be a JSON object.
 */
function typedJson(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The value's inner fields (value.role) are all typed in the one JSON field: their errors go beside it, naming the inner field. */
function onValueField(errors: FieldErrors): FieldErrors {
  const shown: FieldErrors = {};
  for (const [field, message] of Object.entries(errors)) {
    const [target, text] = field.startsWith('value.')
      ? ['value', `${field.slice('value.'.length)}: ${message}`]
      : [field, message];
    shown[target] = shown[target] ? `${shown[target]}; ${text}` : text;
  }
  return shown;
}

/** The MCP key form as typed. */
const typedMcpKey = (body: Record<string, unknown>) => ({
  name: textField(body.name),
  write: checked(body.write),
  expiresInDays: textField(body.expiresInDays).trim(),
});

export function settingsPages({ db }: Deps): Router {
  const pages = new PageRouter(db);
  const settings = settingsService(db);
  const rates = vatRatesService(db);
  const keys = mcpKeysService(db);
  const users = usersService(db);

  pages.use('/settings', (_req, res, next) => {
    res.locals.stylesheets = ['/assets/css/settings.css'];
    next();
  });

  // ---- System settings and the charge-code policies -------------------------------------------

  async function renderSettings(req: Request, res: Response, returned: ReturnedForm | null = null) {
    const [rows, policy, profile, categories] = await Promise.all([
      settings.list(),
      chargeCodePolicy(db),
      accessProfile(db),
      categoriesService(db).list(),
    ]);
    const stored = new Map(rows.map((row) => [row.key, presentSetting(row)]));
    const updaters = new Map(
      await Promise.all(
        [...new Set(rows.flatMap((row) => (row.updated_by ? [row.updated_by] : [])))].map(
          async (id) => [id, await users.findById(id)] as const,
        ),
      ),
    );
    const knownKeys = Object.keys(KNOWN_SETTINGS) as KnownSetting[];
    const list = [...knownKeys, ...rows.map((row) => row.key).filter((key) => !isKnownSetting(key))].map((key) => {
      const setting = stored.get(key);
      const updater = setting?.updatedBy ? updaters.get(setting.updatedBy) : undefined;
      return {
        key,
        meaning: isKnownSetting(key) ? SETTING_MEANINGS[key].meaning : 'Not read by the service: kept for other uses.',
        value: setting ? JSON.stringify(setting.value) : null,
        updatedAt: setting?.updatedAt ?? null,
        updatedBy: updater ? `${updater.first_name} ${updater.last_name}` : null,
      };
    });
    // an Edit link (?key=) fills the setting form with that setting
    const editing = SettingKeyParams.safeParse({ key: req.query.key });
    const editKey = editing.success ? editing.data.key : '';
    const editValue = stored.get(editKey)?.value;
    res.status(returned?.status ?? 200).render('settings/index', {
      title: 'Settings',
      section: 'settings',
      settings: list,
      examples: Object.fromEntries(knownKeys.map((key) => [key, SETTING_MEANINGS[key].example])),
      roleChoices: ROLE_CHOICES,
      policyForm: formState(returned, 'policies', { ...policy }),
      accessProfiles: ACCESS_PROFILE_CHOICES,
      accessForm: formState(returned, 'access', { profile }),
      digestCategories: categories.map((c) => ({ id: c.id, name: c.name })),
      digestForm: formState(returned, 'digest', {
        digestTime: digestTimeOf(stored.get(DIGEST_TIME_KEY)?.value),
        ...Object.fromEntries(categories.map((c) => [`buyers-${c.id}`, c.buyer_emails.join(', ')])),
      }),
      requestsForm: formState(returned, 'requests', {
        notifyEmails: notifyEmailsOf(stored.get(NOTIFY_EMAILS_KEY)?.value).join(', '),
      }),
      settingForm: formState(returned, 'setting', {
        key: editKey,
        value: editValue ? JSON.stringify(editValue, null, 2) : '',
      }),
    });
  }

  pages.get('/settings', { access: 'admin' }, (req, res) => renderSettings(req, res));

  pages.post(
    '/settings',
    {
      access: 'admin',
      form: (body) => settingForm(body.key),
      fromForm: (body) => ({ key: body.key, value: typedJson(body.value) }),
    },
    async (req, res) => {
      const result = await attempt(async () => {
        const { key, value } = req.input.form;
        return settings.put(key, value, actorOf(req));
      });
      if (!result.ok) {
        const values = { key: textField(req.body.key), value: textField(req.body.value) };
        return renderSettings(req, res, { form: 'setting', ...result, errors: onValueField(result.errors), values });
      }
      flash(req, `Setting ${result.value.key} saved`);
      res.redirect(303, '/settings');
    },
  );

  pages.post(
    '/settings/policies',
    {
      access: 'admin',
      form: PolicyForm,
      fromForm: (body) =>
        Object.fromEntries(
          POLICY_NAMES.map((field) => [field, { value: POLICY_FIELDS[field].value(POLICY_FIELDS[field].typed(body)) }]),
        ),
    },
    async (req, res) => {
      const result = await attempt(() => req.input.form);
      if (!result.ok) {
        // each policy's errors beside its field (its value's inner fields included)
        const errors: FieldErrors = Object.fromEntries(
          Object.entries(result.errors).map(([path, message]) => [path.split('.')[0], message]),
        );
        const values = Object.fromEntries(POLICY_NAMES.map((field) => [field, POLICY_FIELDS[field].typed(req.body)]));
        return renderSettings(req, res, {
          form: 'policies',
          status: result.status,
          message: result.message,
          errors,
          values,
        });
      }
      // only the policies that differ from those in force are saved (and audited)
      const current = await chargeCodePolicy(db);
      let saved = 0;
      for (const field of POLICY_NAMES) {
        const { key, value } = POLICY_FIELDS[field];
        const chosen = result.value[field].value;
        if (JSON.stringify(chosen) === JSON.stringify(value(current[field]))) continue;
        await settings.put(key, chosen, actorOf(req));
        saved += 1;
      }
      flash(req, saved > 0 ? 'Charge-code policies saved' : 'No policy changed');
      res.redirect(303, '/settings');
    },
  );

  // The low-stock digest: its time (a setting) and each category's buyers (the categories' own field).
  pages.post(
    '/settings/digest',
    {
      access: 'admin',
      form: DigestForm,
      // each category's buyers as typed beside it: a list of addresses
      fromForm: (body, _req, categories: { id: number }[]) => ({
        time: { time: textField(body.digestTime).trim() },
        buyers: Object.fromEntries(
          categories.map((c) => [
            c.id,
            {
              buyerEmails: textField(body[`buyers-${c.id}`])
                .split(/[\s,;]+/)
                .filter(Boolean),
            },
          ]),
        ),
      }),
    },
    async (req, res) => {
      const categories = await categoriesService(db).list();
      const values: Record<string, string> = { digestTime: textField(req.body.digestTime).trim() };
      for (const c of categories) values[`buyers-${c.id}`] = textField(req.body[`buyers-${c.id}`]);
      const result = await attempt(() => req.input.formWith(categories));
      if (!result.ok) {
        // a field's first error beside it: the time, or a category's buyers
        const errors: FieldErrors = {};
        for (const [path, message] of Object.entries(result.errors)) {
          const [part, id] = path.split('.');
          const field = part === 'buyers' ? `buyers-${id}` : 'digestTime';
          errors[field] ??= message;
        }
        return renderSettings(req, res, {
          form: 'digest',
          status: 422,
          message: 'Please correct the fields marked below',
          errors,
          values,
        });
      }
      const { time, buyers } = result.value;
      if (digestTimeOf((await settings.get(DIGEST_TIME_KEY)) ?? undefined) !== time.time)
        await settings.put(DIGEST_TIME_KEY, time, actorOf(req));
      for (const c of categories) {
        const next = buyers[c.id].buyerEmails!;
        if (next.join(',') !== c.buyer_emails.join(','))
          await categoriesService(db).update(c.id, { buyerEmails: next });
      }
      flash(req, 'Low-stock digest saved');
      res.redirect(303, '/settings#digest');
    },
  );

  // The stores' request inbox: a list of addresses (the setting requests.notifyEmails); empty, the managers.
  pages.post(
    '/settings/requests',
    {
      access: 'admin',
      form: KNOWN_SETTINGS[NOTIFY_EMAILS_KEY],
      fromForm: (body) => ({
        emails: textField(body.notifyEmails)
          .split(/[\s,;]+/)
          .filter(Boolean),
      }),
    },
    async (req, res) => {
      const typed = textField(req.body.notifyEmails);
      const result = await attempt(() => req.input.form);
      if (!result.ok)
        return renderSettings(req, res, {
          form: 'requests',
          status: 422,
          message: 'Please correct the fields marked below',
          errors: { notifyEmails: Object.values(result.errors)[0] ?? result.message },
          values: { notifyEmails: typed },
        });
      if (notifyEmailsOf(await settings.get(NOTIFY_EMAILS_KEY)).join(',') !== result.value.emails.join(','))
        await settings.put(NOTIFY_EMAILS_KEY, result.value, actorOf(req));
      flash(req, 'Request inbox saved');
      res.redirect(303, '/settings#request-inbox');
    },
  );

  pages.post(
    '/settings/access',
    {
      access: 'admin',
      form: KNOWN_SETTINGS['access.profile'],
      fromForm: (body) => ({ profile: body.profile }),
    },
    async (req, res) => {
      const result = await attempt(() => req.input.form);
      if (!result.ok) {
        return renderSettings(req, res, {
          form: 'access',
          ...result,
          values: { profile: textField(req.body.profile) },
        });
      }
      if ((await accessProfile(db)) === result.value.profile) {
        flash(req, 'Access profile unchanged');
      } else {
        await settings.put('access.profile', result.value, actorOf(req));
        flash(req, `Access profile set to ${result.value.profile}`);
      }
      res.redirect(303, '/settings');
    },
  );

  // ---- VAT rates ------------------------------------------------------------------------------

  async function renderVatRates(res: Response, returned: ReturnedForm | null = null) {
    res.status(returned?.status ?? 200).render('settings/vat-rates', {
      title: 'VAT rates',
      section: 'vat-rates',
      rates: presentVatRateList(await rates.list()).rates,
      createForm: formState(returned, 'create', { name: '', rate: '', isDefault: false }),
    });
  }

  const renderVatRate = (
    res: Response,
    rate: VatRate,
    {
      view,
      form,
      status = 200,
    }: {
      view: 'vat-rate-edit' | 'vat-rate-delete';
      form: { values: Record<string, unknown>; errors: FieldErrors; message: string | null };
      status?: number;
    },
  ) =>
    res.status(status).render(`settings/${view}`, {
      title: view === 'vat-rate-edit' ? `Edit VAT rate ${rate.name}` : `Delete VAT rate ${rate.name}`,
      section: 'vat-rates',
      rate,
      form,
    });

  pages.get('/settings/vat-rates', { access: 'admin' }, (_req, res) => renderVatRates(res));

  pages.post(
    '/settings/vat-rates',
    {
      access: 'admin',
      form: CreateVatRate,
      fromForm: (body) => ({ ...filledIn({ name: body.name, rate: body.rate }), isDefault: checked(body.isDefault) }),
    },
    async (req, res) => {
      const result = await attempt(() => rates.create(req.input.form, actorOf(req)));
      if (!result.ok) {
        return renderVatRates(res, {
          form: 'create',
          ...result,
          values: {
            name: textField(req.body.name),
            rate: textField(req.body.rate),
            isDefault: checked(req.body.isDefault),
          },
        });
      }
      flash(req, `VAT rate ${result.value.name} added`);
      res.redirect(303, '/settings/vat-rates');
    },
  );

  pages.get('/settings/vat-rates/:rateId/edit', { access: 'admin', params: RateIdParams }, async (req, res) => {
    const rate = presentVatRate(await rates.get(req.input.params.rateId));
    renderVatRate(res, rate, {
      view: 'vat-rate-edit',
      form: { values: { name: rate.name, rate: String(rate.rate) }, errors: {}, message: null },
    });
  });

  pages.post(
    '/settings/vat-rates/:rateId',
    {
      access: 'admin',
      params: RateIdParams,
      form: UpdateVatRate,
      fromForm: (body) => ({ name: body.name, rate: body.rate }),
    },
    async (req, res) => {
      const { rateId } = req.input.params;
      const result = await attempt(() => rates.update(rateId, req.input.form, actorOf(req)));
      if (!result.ok) {
        const rate = presentVatRate(await rates.get(rateId));
        return renderVatRate(res, rate, {
          view: 'vat-rate-edit',
          form: {
            values: { name: textField(req.body.name), rate: textField(req.body.rate) },
            errors: result.errors,
            message: result.message,
          },
          status: result.status,
        });
      }
      flash(req, `VAT rate ${result.value.name} saved`);
      res.redirect(303, '/settings/vat-rates');
    },
  );

  pages.post(
    '/settings/vat-rates/:rateId/default',
    { access: 'admin', params: RateIdParams, form: UpdateVatRate, fromForm: () => ({ isDefault: true }) },
    async (req, res) => {
      const { rateId } = req.input.params;
      const rate = await rates.update(rateId, req.input.form, actorOf(req));
      flash(req, `${rate.name} is now the default VAT rate`);
      res.redirect(303, '/settings/vat-rates');
    },
  );

  // deleting asks first: this page says what goes, and refuses the default rate before anything is posted
  pages.get('/settings/vat-rates/:rateId/delete', { access: 'admin', params: RateIdParams }, async (req, res) => {
    const rate = presentVatRate(await rates.get(req.input.params.rateId));
    renderVatRate(res, rate, { view: 'vat-rate-delete', form: { values: {}, errors: {}, message: null } });
  });

  pages.post('/settings/vat-rates/:rateId/delete', { access: 'admin', params: RateIdParams }, async (req, res) => {
    const { rateId } = req.input.params;
    const rate = presentVatRate(await rates.get(rateId));
    const result = await attempt(() => rates.delete(rateId, actorOf(req)));
    if (!result.ok)
      return renderVatRate(res, rate, {
        view: 'vat-rate-delete',
        form: { values: {}, errors: {}, message: result.message },
        status: result.status,
      });
    flash(req, `VAT rate ${rate.name} deleted`);
    res.redirect(303, '/settings/vat-rates');
  });

  // ---- MCP keys -------------------------------------------------------------------------------

  async function renderMcpKeys(res: Response, returned: ReturnedForm | null = null) {
    const maxLifetimeDays = await keys.maxLifetimeDays();
    res.status(returned?.status ?? 200).render('settings/mcp-keys', {
      title: 'MCP keys',
      section: 'mcp-keys',
      keys: (await keys.list()).map(presentMcpKey),
      maxLifetimeDays,
      defaultLifetimeDays: Math.min(MCP_KEY_DEFAULT_DAYS, maxLifetimeDays),
      createForm: formState(returned, 'create', { name: '', write: false, expiresInDays: '' }),
    });
  }

  async function findKey(id: number): Promise<McpKey> {
    const key = (await keys.list()).find((row) => row.id === id);
    if (!key) throw NotFound('MCP API key not found');
    return presentMcpKey(key);
  }

  pages.get('/settings/mcp-keys', { access: 'admin' }, (_req, res) => renderMcpKeys(res));

  pages.post(
    '/settings/mcp-keys',
    {
      access: 'admin',
      form: CreateMcpKey,
      fromForm: (body) => {
        const typed = typedMcpKey(body);
        return {
          name: typed.name,
          // read is every key's; the checkbox adds write
          scopes: typed.write ? ['read', 'write'] : ['read'],
          expiresInDays: typed.expiresInDays === '' ? undefined : Number(typed.expiresInDays),
        };
      },
    },
    async (req, res) => {
      const typed = typedMcpKey(req.body);
      const result = await attempt(() => keys.create(actorOf(req), req.input.form));
      if (!result.ok) return renderMcpKeys(res, { form: 'create', ...result, values: typed });
      // the secret is shown in this answer only: never stored, in the session or any cache
      res.set('Cache-Control', 'no-store');
      res.locals.scripts = ['/assets/js/settings.js'];
      res.status(201).render('settings/mcp-key-created', {
        title: 'MCP key created',
        section: 'mcp-keys',
        key: presentCreatedMcpKey(result.value),
      });
    },
  );

  pages.get('/settings/mcp-keys/:id/revoke', { access: 'admin', params: IdParams }, async (req, res) => {
    const key = await findKey(req.input.params.id);
    res.render('settings/mcp-key-revoke', { title: `Revoke MCP key ${key.name}`, section: 'mcp-keys', key });
  });

  pages.post('/settings/mcp-keys/:id/revoke', { access: 'admin', params: IdParams }, async (req, res) => {
    const key = await findKey(req.input.params.id);
    await keys.revoke(key.id, actorOf(req));
    flash(req, `MCP key ${key.name} revoked`);
    res.redirect(303, '/settings/mcp-keys');
  });

  return pages.router;
}
