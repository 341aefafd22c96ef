import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import type { Deps } from '../deps';
import { currentUser } from '../auth/guards';
import { actorOf } from '../modules/audit/audit.actor';
import { categoriesService } from '../modules/categories/categories.service';
import {
  administersChargeCodes,
  CHARGE_CODE_ADMINS,
  chargeCodePolicy,
  holdSeniorityRefusal,
  mayChangeHolds,
  requireHoldRole,
} from '../modules/chargecodes/chargecodes.policy';
import {
  presentAuthorisedUsers,
  presentChargeCode,
  presentChargeCodeSummary,
  presentExcludedCategory,
} from '../modules/chargecodes/chargecodes.present';
import {
  AuthorisedUserBody,
  CodeCategoryParams,
  CodeParams,
  CodeUserParams,
  CreateChargeCode,
  ExclusionBody,
  HoldBody,
  HoldReleaseForm,
  UpdateChargeCode,
  type ChargeCode,
  type ChargeCodeSummary,
} from '../modules/chargecodes/chargecodes.schemas';
import { chargeCodesService } from '../modules/chargecodes/chargecodes.service';
import { chargeCodeStatus } from '../modules/sales/sales.charge-code-status';
import { usersService, type UserRow } from '../modules/users/users.service';
import { attempt, checked, flash, formState, textField, type FieldErrors, type ReturnedForm } from './forms';
import { NOTE_FORM, notesSection } from './notes-section';
import { PageRouter } from './page-route';
import { wantsPartial } from './page-render';

/** The list's search: a part of the code, title or cost centre (the API's list takes no filter, so the page narrows it). */
const ChargeCodeSearch = z.object({ q: z.string().trim().max(100).optional() });

/** A code's page; a code may hold "/" (the schema allows it), so it is always encoded in a path. */
const codeHref = (code: string) => `/chargecodes/${encodeURIComponent(code)}`;

/**
 * Validity is kept in whole UTC days (a plain validUntil date ends at 23:59:59.999Z, the counter's
 * messages give UTC dates), so it is shown as UTC days: in UK time an end of day in summer would
 * read as the next day.
 */
const UTC_DAY = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
const formatDay = (iso: string) => UTC_DAY.format(new Date(iso));
const isoDay = (iso: string) => iso.slice(0, 10);

type Mark = { label: string; tone: 'danger' | 'warn' | 'ok' | 'plain' };

/** What a person needs to know at a glance: on hold, outside its validity, or expiring within the API's 30-day window. */
function marksOf(code: ChargeCodeSummary, daysUntilExpiry: number | undefined, now: Date): Mark[] {
  const marks: Mark[] = [];
  if (code.onHold) marks.push({ label: 'On hold', tone: 'danger' });
  if (new Date(code.validUntil) < now) marks.push({ label: 'Expired', tone: 'danger' });
  else if (new Date(code.validFrom) > now) marks.push({ label: 'Not yet valid', tone: 'warn' });
  else if (daysUntilExpiry !== undefined)
    marks.push({
      label: `Expires within 30 days (${daysUntilExpiry} ${daysUntilExpiry === 1 ? 'day' : 'days'})`,
      tone: 'warn',
    });
  if (marks.length === 0) marks.push({ label: 'Valid', tone: 'ok' });
  return marks;
}

const CODE_FIELDS = [
  'code',
  'title',
  'costCentre',
  'validFrom',
  'validUntil',
  'authorisedBy',
  'approverEmail',
  'approvalThreshold',
] as const;
/** The create/edit form as typed. The PIN is write-only: never part of what is shown again. */
type CodeForm = Record<(typeof CODE_FIELDS)[number], string>;

const readCodeForm = (body: Record<string, unknown>): CodeForm =>
  Object.fromEntries(CODE_FIELDS.map((field) => [field, textField(body[field])])) as CodeForm;

/** The create form as the API's body: an empty PIN is no PIN, an empty "authorised by" the creating admin (the API's default). */
const createBody = (form: CodeForm, pin: string) => ({
  code: form.code,
  title: form.title,
  costCentre: form.costCentre,
  validFrom: form.validFrom,
  validUntil: form.validUntil,
  ...(pin !== '' ? { pin } : {}),
  ...(form.authorisedBy !== '' ? { authorisedBy: form.authorisedBy } : {}),
  ...approvalOf(form),
});

/** The approver and threshold of requests on the code (issue 33): an empty field is none. */
const approvalOf = (form: CodeForm) => ({
  approverEmail: form.approverEmail === '' ? null : form.approverEmail,
  approvalThreshold: form.approvalThreshold === '' ? null : form.approvalThreshold,
});

/**
 * The edit form as the API's partial update. The form shows whole days: a date left as shown keeps
 * the stored instant rather than being moved to that day's start or end. The PIN changes only when
 * a new one is typed or its removal is ticked.
 */
function updateBody(form: CodeForm, current: ChargeCode, pin: string, removePin: boolean) {
  return {
    title: form.title,
    costCentre: form.costCentre,
    ...(form.validFrom !== isoDay(current.validFrom) ? { validFrom: form.validFrom } : {}),
    ...(form.validUntil !== isoDay(current.validUntil) ? { validUntil: form.validUntil } : {}),
    authorisedBy: form.authorisedBy === '' ? null : form.authorisedBy,
    ...approvalOf(form),
    ...(removePin ? { pin: null } : pin !== '' ? { pin } : {}),
  };
}

/** The authorised-person form as typed. */
const typedAuthorisedUser = (body: Record<string, unknown>) => ({
  userName: textField(body.userName),
  email: textField(body.email),
  department: textField(body.department),
  notes: textField(body.notes),
});

const formOfCode = (code: ChargeCode): CodeForm => ({
  code: code.code,
  title: code.title,
  costCentre: code.costCentre,
  validFrom: isoDay(code.validFrom),
  validUntil: isoDay(code.validUntil),
  authorisedBy: code.authorisedBy ?? '',
  approverEmail: code.approverEmail ?? '',
  approvalThreshold: code.approvalThreshold ?? '',
});

const personName = (user: Pick<UserRow, 'first_name' | 'last_name' | 'email'>) =>
  `${user.first_name} ${user.last_name} (${user.email})`;

/** The page's forms: the one a refused post re-renders is named in its ReturnedForm. */
type DetailFormName = 'hold' | 'exclusion' | 'user' | 'note';

/** /chargecodes and /chargecodes/{code}: the list, the admins' create and edit forms, and a code's page with its holds, exclusions, authorised people, notes and spending. */
export function chargecodesPages({ db, config }: Deps): Router {
  const pages = new PageRouter(db);
  const codes = chargeCodesService(db, config);
  const categories = categoriesService(db);
  const noteSection = notesSection(db);
  const users = usersService(db);
  // the API's own guard of holds and exclusions: the chargeCodes.holdRole setting's role and up
  const holdRole = requireHoldRole(db);

  pages.use('/chargecodes', (req, res, next) => {
    res.locals.stylesheets = ['/assets/css/chargecodes.css'];
    // the create, edit and authorised-people forms: the policy the API's guards keep
    res.locals.administersChargeCodes = req.user !== undefined && administersChargeCodes(req.user);
    res.locals.codeHref = codeHref;
    res.locals.formatDay = formatDay;
    next();
  });

  pages.get('/chargecodes', { access: 'user', query: ChargeCodeSearch }, async (req, res) => {
    const { q = '' } = req.input.query;
    const now = new Date();
    const [rows, expiring] = await Promise.all([codes.list(), codes.expiringSoon(now)]);
    const daysLeft = new Map(expiring.map((e) => [e.code.id, e.daysUntilExpiry]));
    const term = q.toLowerCase();
    const matching =
      term === ''
        ? rows
        : rows.filter((row) =>
            [row.code, row.title, row.cost_centre].some((text) => text.toLowerCase().includes(term)),
          );
    const list = matching.map((row) => {
      const code = presentChargeCodeSummary(row);
      return { ...code, marks: marksOf(code, daysLeft.get(row.id), now) };
    });
    res.render(wantsPartial(req) ? 'chargecodes/_rows' : 'chargecodes/index', {
      title: 'Charge codes',
      q,
      codes: list,
      total: rows.length,
    });
  });

  async function codeFormView(
    title: string,
    action: string,
    form: CodeForm,
    extra: { hasPin?: boolean; errors?: FieldErrors; message?: string | null } = {},
  ) {
    const people = (await users.list()).filter((user) => user.is_active || user.id === form.authorisedBy);
    return {
      title,
      action,
      isNew: action === '/chargecodes',
      values: form,
      people: people.map((user) => ({ id: user.id, name: personName(user) })),
      hasPin: extra.hasPin ?? false,
      errors: extra.errors ?? {},
      message: extra.message ?? null,
    };
  }

  // before /chargecodes/:code, which would read "new" as a code
  pages.get('/chargecodes/new', { access: CHARGE_CODE_ADMINS }, async (req, res) => {
    const blank = readCodeForm({ authorisedBy: currentUser(req).id });
    res.render('chargecodes/form', await codeFormView('New charge code', '/chargecodes', blank));
  });

  pages.post(
    '/chargecodes',
    {
      access: CHARGE_CODE_ADMINS,
      form: CreateChargeCode,
      fromForm: (body) => createBody(readCodeForm(body), textField(body.pin)),
    },
    async (req, res) => {
      const form = readCodeForm(req.body);
      const result = await attempt(() => codes.create(req.input.form, actorOf(req)));
      if (!result.ok)
        return res
          .status(result.status)
          .render('chargecodes/form', await codeFormView('New charge code', '/chargecodes', form, result));
      flash(req, `Charge code '${result.value.code.code}' created`);
      res.redirect(303, codeHref(result.value.code.code));
    },
  );

  /** Everything the code's page shows; a refused form comes back with its errors and what was typed. */
  async function renderCode(
    req: Request,
    res: Response,
    code: string,
    returned: ReturnedForm<DetailFormName> | null = null,
  ) {
    const user = currentUser(req);
    const status = await chargeCodeStatus(db, code);
    const chargeCode = presentChargeCode({
      code: status.code,
      excludedCategoryIds: status.excludedCategories.map((c) => c.id),
    });
    const [authorised, noteRows, policy, allCategories, authoriser] = await Promise.all([
      codes.listUsers(code),
      noteSection.list(req, 'charge_code', status.code.code),
      chargeCodePolicy(db),
      categories.list(),
      chargeCode.authorisedBy ? users.findById(chargeCode.authorisedBy) : undefined,
    ]);
    const excluded = new Set(chargeCode.excludedCategoryIds);
    res.status(returned?.status ?? 200).render('chargecodes/show', {
      title: `Charge code ${chargeCode.code}`,
      chargeCode,
      marks: marksOf(chargeCode, status.daysUntilExpiry ?? undefined, new Date()),
      refusal: status.refusal,
      authoriser: authoriser ? personName(authoriser) : null,
      spent: status.spent,
      exclusions: status.excludedCategories.map(presentExcludedCategory),
      // a category excluded already is not offered again
      categories: allCategories.filter((c) => !excluded.has(c.id)).map((c) => ({ id: c.id, name: c.name })),
      authorisedUsers: presentAuthorisedUsers(authorised),
      notes: noteRows,
      mayHold: mayChangeHolds(user, policy),
      holdRole: policy.holdRole,
      // why this person may not change or release the hold (its placer is more senior), or null
      holdRefusal: chargeCode.onHold
        ? holdSeniorityRefusal(chargeCode.holdPlacedBy?.role ?? null, user, 'release')
        : null,
      holdForm: formState(returned, 'hold', { holdReason: '' }),
      exclusionForm: formState(returned, 'exclusion', { categoryId: '' }),
      userForm: formState(returned, 'user', { userName: '', email: '', department: '', notes: '' }),
      noteForm: formState(returned, 'note', { text: '' }),
    });
  }

  pages.get('/chargecodes/:code', { access: 'user', params: CodeParams }, async (req, res) => {
    await renderCode(req, res, req.input.params.code);
  });

  pages.get('/chargecodes/:code/edit', { access: CHARGE_CODE_ADMINS, params: CodeParams }, async (req, res) => {
    const { code } = req.input.params;
    const current = presentChargeCode(await codes.get(code));
    res.render(
      'chargecodes/form',
      await codeFormView(`Edit ${current.code}`, codeHref(current.code), formOfCode(current), {
        hasPin: current.hasPin,
      }),
    );
  });

  pages.post(
    '/chargecodes/:code',
    {
      access: CHARGE_CODE_ADMINS,
      params: CodeParams,
      form: UpdateChargeCode,
      fromForm: (body, _req, current: ChargeCode) =>
        updateBody(readCodeForm(body), current, textField(body.pin), checked(body.removePin)),
    },
    async (req, res) => {
      const { code } = req.input.params;
      const current = presentChargeCode(await codes.get(code));
      const form = { ...readCodeForm(req.body), code: current.code };
      const result = await attempt(() => codes.update(code, req.input.formWith(current), actorOf(req)));
      if (!result.ok) {
        const view = await codeFormView(`Edit ${current.code}`, codeHref(current.code), form, {
          ...result,
          hasPin: current.hasPin,
        });
        return res.status(result.status).render('chargecodes/form', view);
      }
      flash(req, `Charge code '${current.code}' saved`);
      res.redirect(303, codeHref(current.code));
    },
  );

  // Put on hold (onHold "true" with a reason) or release it (onHold "false", with the reason the page requires): the API's PATCH .../hold.
  // A release refused for seniority comes back on the code's page with the API's words.
  pages.post(
    '/chargecodes/:code/hold',
    {
      access: 'user',
      params: CodeParams,
      form: (body) => (checked(body.onHold) ? HoldBody : HoldReleaseForm),
      fromForm: (body) => ({ onHold: checked(body.onHold), holdReason: textField(body.holdReason) }),
    },
    holdRole,
    async (req, res) => {
      const { code } = req.input.params;
      const onHold = checked(req.body.onHold);
      const values = { holdReason: textField(req.body.holdReason) };
      const result = await attempt(() => {
        const body = req.input.form;
        return codes.setHold(
          code,
          { onHold: body.onHold, reason: body.holdReason },
          { actor: actorOf(req), user: currentUser(req) },
        );
      }, [400, 403, 409, 422]);
      if (!result.ok) return renderCode(req, res, code, { form: 'hold', ...result, values });
      flash(
        req,
        onHold
          ? `Charge code '${result.value.code}' is on hold`
          : `Hold on charge code '${result.value.code}' released`,
      );
      res.redirect(303, codeHref(result.value.code));
    },
  );

  pages.post(
    '/chargecodes/:code/exclusions',
    {
      access: 'user',
      params: CodeParams,
      form: ExclusionBody,
      fromForm: (body) => ({ categoryId: textField(body.categoryId) }),
    },
    holdRole,
    async (req, res) => {
      const { code } = req.input.params;
      const values = { categoryId: textField(req.body.categoryId) };
      const result = await attempt(
        () => codes.addExclusion(code, req.input.form.categoryId, actorOf(req)),
        [400, 404, 409, 422],
      );
      if (!result.ok) return renderCode(req, res, code, { form: 'exclusion', ...result, values });
      flash(req, result.value ? 'Category excluded' : 'That category was already excluded');
      res.redirect(303, `${codeHref(code)}#exclusions`);
    },
  );

  pages.post(
    '/chargecodes/:code/exclusions/:categoryId/remove',
    { access: 'user', params: CodeCategoryParams },
    holdRole,
    async (req, res) => {
      const { code, categoryId } = req.input.params;
      await codes.removeExclusion(code, categoryId, actorOf(req));
      flash(req, 'Exclusion removed');
      res.redirect(303, `${codeHref(code)}#exclusions`);
    },
  );

  pages.post(
    '/chargecodes/:code/authorised-users',
    {
      access: CHARGE_CODE_ADMINS,
      params: CodeParams,
      form: AuthorisedUserBody,
      fromForm: (body) => {
        const values = typedAuthorisedUser(body);
        return { ...values, notes: values.notes.trim() === '' ? null : values.notes };
      },
    },
    async (req, res) => {
      const { code } = req.input.params;
      const values = typedAuthorisedUser(req.body);
      const result = await attempt(() => codes.addUser(code, req.input.form, actorOf(req)));
      if (!result.ok) return renderCode(req, res, code, { form: 'user', ...result, values });
      flash(req, `${result.value.user.user_name} may now use charge code '${result.value.code.code}'`);
      res.redirect(303, `${codeHref(code)}#authorised-users`);
    },
  );

  pages.post(
    '/chargecodes/:code/authorised-users/:id/remove',
    { access: CHARGE_CODE_ADMINS, params: CodeUserParams },
    async (req, res) => {
      const { code, id } = req.input.params;
      await codes.removeUser(code, id, actorOf(req));
      flash(req, 'Authorised person removed');
      res.redirect(303, `${codeHref(code)}#authorised-users`);
    },
  );

  pages.post('/chargecodes/:code/notes', { access: 'user', params: CodeParams, ...NOTE_FORM }, async (req, res) => {
    const { code } = req.input.params;
    const refused = await noteSection.add(req, 'charge_code', code);
    if (refused) return renderCode(req, res, code, refused);
    res.redirect(303, `${codeHref(code)}#notes`);
  });

  return pages.router;
}
