import { z } from 'zod';
import '../../http/openapi';
import { decimalString, IntId } from '../../http/validate';
import { Role } from '../../auth/roles';

/** A timestamp or a plain date (YYYY-MM-DD). A plain validUntil date covers that whole day (UTC). */
const dateInput = (endOfDay: boolean) =>
  z.string().transform((value, ctx) => {
    const text = value.trim();
    const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
    const parsed = new Date(dateOnly ? `${text}T${endOfDay ? '23:59:59.999' : '00:00:00.000'}Z` : text);
    if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(parsed.getTime())) {
      ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 date or timestamp' });
      return z.NEVER;
    }
    return parsed;
  });

const Code = z
  .string()
  .trim()
  .min(1, { error: 'is required' })
  .max(64, { error: 'must be at most 64 characters' })
  .regex(/^[A-Za-z0-9._\-/]+$/, { error: 'may contain only letters, digits and . _ - /' });

export const CodeParams = z.object({ code: z.string().min(1) });
export const CodeCategoryParams = z.object({ code: z.string().min(1), categoryId: IntId });
export const CodeUserParams = z.object({ code: z.string().min(1), id: IntId });

/** Who approves a request on the code over its threshold: matched to the signed-in person's email, case-insensitively. */
const ApproverEmail = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.email({ error: 'must be an email address' }))
  .pipe(z.string().max(320))
  .nullable()
  .openapi({
    description:
      'The email of the person who approves requests on this code (POST /api/requests/{id}/approve): the signed-in person whose email it is. Null: only admins approve. Stored lower-case.',
    example: 'pi@example.ac.uk',
  });

/** A request's total over this waits for the approver; null: no approval needed. */
const ApprovalThreshold = decimalString({ places: 2, min: 0, max: 999_999_999_999.99 }).nullable().openapi({
  type: 'string',
  description:
    'A decimal string: a request whose total (VAT included) is over it waits for approval (awaiting_approval). Null: no approval needed.',
  example: '500.00',
});

const validRange = (v: { validFrom?: Date; validUntil?: Date }) =>
  !v.validFrom || !v.validUntil || v.validFrom.getTime() <= v.validUntil.getTime();
const rangeIssue = { error: 'validFrom must not be after validUntil', path: ['validUntil'] };

export const CreateChargeCode = z
  .object({
    code: Code,
    title: z.string().trim().min(1, { error: 'is required' }),
    validFrom: dateInput(false),
    validUntil: dateInput(true),
    costCentre: z.string().trim().default(''),
    pin: z.string().min(1).max(128).optional(),
    authorisedBy: z.string().uuid({ error: 'must be a user id (uuid)' }).nullable().optional(),
    approverEmail: ApproverEmail.optional(),
    approvalThreshold: ApprovalThreshold.optional(),
  })
  .refine(validRange, rangeIssue);
export type CreateChargeCode = z.infer<typeof CreateChargeCode>;

export const UpdateChargeCode = z
  .object({
    title: z.string().trim().min(1, { error: 'must not be empty' }).optional(),
    validFrom: dateInput(false).optional(),
    validUntil: dateInput(true).optional(),
    costCentre: z.string().trim().optional(),
    pin: z.string().min(1).max(128).nullable().optional(),
    authorisedBy: z.string().uuid({ error: 'must be a user id (uuid)' }).nullable().optional(),
    approverEmail: ApproverEmail.optional(),
    approvalThreshold: ApprovalThreshold.optional(),
  })
  .refine(validRange, rangeIssue);
export type UpdateChargeCode = z.infer<typeof UpdateChargeCode>;

const HoldReason = z.string().trim().max(500, { error: 'must be at most 500 characters' });

export const HoldBody = z
  .object({
    onHold: z.boolean({ error: 'must be a boolean' }),
    holdReason: HoldReason.optional().openapi({
      description: 'Placing a hold: why (required). Releasing: why it is released (optional; kept in the audit trail).',
    }),
  })
  .refine((v) => !v.onHold || (v.holdReason ?? '').length > 0, {
    error: 'is required when onHold is true',
    path: ['holdReason'],
  });

/** The page's Release hold form: the API's release, with the reason it leaves optional required. */
export const HoldReleaseForm = z.object({
  onHold: z.literal(false),
  holdReason: HoldReason.min(1, { error: 'is required to release a hold' }),
});

export const ExclusionBody = z.object({ categoryId: IntId });

export const AuthorisedUserBody = z.object({
  userName: z.string().trim().min(1, { error: 'is required' }),
  email: z.string().trim().email({ error: 'must be an email address' }),
  department: z.string().trim().default(''),
  notes: z.string().trim().nullable().optional(),
});
export type AuthorisedUserBody = z.infer<typeof AuthorisedUserBody>;

export const ChargeCodeSummary = z
  .object({
    code: z.string(),
    title: z.string(),
    authorisedBy: z.string().nullable(),
    validFrom: z.string(),
    validUntil: z.string(),
    costCentre: z.string(),
    onHold: z.boolean(),
    holdReason: z.string().nullable(),
    holdPlacedBy: z.object({ userId: z.string(), name: z.string(), role: Role }).nullable().openapi({
      description:
        'Who placed the hold, at the role they had then; only that role and above can change or release it. Null when not on hold, or for a hold placed before placers were recorded.',
    }),
    holdPlacedAt: z.string().nullable(),
    approverEmail: z.string().nullable().openapi({
      description:
        'Who approves requests on the code over approvalThreshold (by their sign-in email); null: only admins',
    }),
    approvalThreshold: z.string().nullable().openapi({
      description: 'A decimal string: requests totalling more wait for approval; null: no approval needed',
      example: '500.00',
    }),
  })
  .openapi('ChargeCodeSummary');
export type ChargeCodeSummary = z.infer<typeof ChargeCodeSummary>;

export const ChargeCodeList = z.array(ChargeCodeSummary);

export const ExpiringChargeCode = ChargeCodeSummary.extend({ daysUntilExpiry: z.number().int() }).openapi(
  'ExpiringChargeCode',
);
export type ExpiringChargeCode = z.infer<typeof ExpiringChargeCode>;

export const ExpiringChargeCodes = z.array(ExpiringChargeCode);

export const ChargeCode = ChargeCodeSummary.extend({
  hasPin: z.boolean(),
  excludedCategoryIds: z.array(z.number().int()),
  createdAt: z.string(),
  updatedAt: z.string(),
}).openapi('ChargeCode');
export type ChargeCode = z.infer<typeof ChargeCode>;

export const ExcludedCategory = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    icon: z.string().nullable(),
    color: z.string().nullable(),
  })
  .openapi('ExcludedCategory');
export type ExcludedCategory = z.infer<typeof ExcludedCategory>;

export const ExcludedCategories = z.array(ExcludedCategory);

export const AuthorisedUser = z
  .object({
    id: z.number().int(),
    chargeCode: z.string(),
    userName: z.string(),
    email: z.string(),
    department: z.string(),
    notes: z.string().nullable(),
  })
  .openapi('ChargeCodeAuthorisedUser');
export type AuthorisedUser = z.infer<typeof AuthorisedUser>;

export const AuthorisedUsers = z.array(AuthorisedUser);
