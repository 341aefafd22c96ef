import type {
  AuthorisedUser,
  ChargeCode,
  ChargeCodeSummary,
  ExcludedCategory,
  ExpiringChargeCode,
} from './chargecodes.schemas';
import {
  holdState,
  type AuthorisedUserRow,
  type ChargeCodeRecord,
  type ChargeCodeRow,
  type ExcludedCategoryRow,
  type ExpiringChargeCode as ExpiringRecord,
} from './chargecodes.service';

/** The list form the spec shows, plus the hold state. The pin never leaves the service. */
export function presentChargeCodeSummary(row: ChargeCodeRow): ChargeCodeSummary {
  return {
    code: row.code,
    title: row.title,
    authorisedBy: row.authorised_by,
    validFrom: row.valid_from.toISOString(),
    validUntil: row.valid_until.toISOString(),
    costCentre: row.cost_centre,
    ...holdState(row),
    approverEmail: row.approver_email,
    approvalThreshold: row.approval_threshold,
  };
}

/** The full form: whether a pin is set (never the pin) and the excluded categories. */
export function presentChargeCode({ code: row, excludedCategoryIds }: ChargeCodeRecord): ChargeCode {
  return {
    ...presentChargeCodeSummary(row),
    hasPin: row.pin_hash !== null,
    excludedCategoryIds,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export const presentExpiringChargeCode = ({ code, daysUntilExpiry }: ExpiringRecord): ExpiringChargeCode => ({
  ...presentChargeCodeSummary(code),
  daysUntilExpiry,
});

export const presentExcludedCategory = (row: ExcludedCategoryRow): ExcludedCategory => ({
  id: row.id,
  name: row.name,
  description: row.description,
  icon: row.icon,
  color: row.color,
});

export const presentAuthorisedUser = ({
  code,
  user,
}: {
  code: ChargeCodeRow;
  user: AuthorisedUserRow;
}): AuthorisedUser => ({
  id: user.id,
  chargeCode: code.code,
  userName: user.user_name,
  email: user.email,
  department: user.department,
  notes: user.notes,
});

export const presentAuthorisedUsers = ({
  code,
  users,
}: {
  code: ChargeCodeRow;
  users: AuthorisedUserRow[];
}): AuthorisedUser[] => users.map((user) => presentAuthorisedUser({ code, user }));
