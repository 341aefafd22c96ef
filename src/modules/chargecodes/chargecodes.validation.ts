import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Db } from '../../db/knex';
import { verifyPassword } from '../../auth/passwords';
import { rateLimitCounter } from '../../auth/rate-limits';
import { BadRequest, Conflict, TooManyRequests } from '../../http/errors';
import { preparedRaw } from '../../db/prepared';
import { sql } from '../../db/sql';
import { chargeCodeForCheckSql } from './chargecodes.queries';
import type { ChargeCodePolicy } from './chargecodes.policy';

/** MM/DD/YYYY in UTC, as the spec's messages show dates. */
export function formatUsDate(date: Date): string {
  const mm = String(date.getUTCMonth() + 1).padStart(2, '0');
  const dd = String(date.getUTCDate()).padStart(2, '0');
  return `${mm}/${dd}/${date.getUTCFullYear()}`;
}

export const missingChargeCodeMessage =
  'This quote is missing a charge code. Please edit the quote and add a charge code before processing.';

export type ChargeCodeCheck = {
  /** categories of the lines the code would pay for (exclusion check) */
  categoryIds: number[];
  /** processing appends the available codes to the unknown-code message */
  processing?: boolean;
  /** a sale is also held to the policies of the settings */
  sale?: SaleAuthorisation;
  /**
   * A requester's email (issue 40): the code must name them among its authorised users, whatever
   * chargeCodes.requireAuthorisedUser says, before anything else is said of it.
   */
  requester?: string;
  now?: Date;
};

/** What a sale brings for the charge-code policies that are on (chargeCodePolicy). */
export type SaleAuthorisation = {
  policy: Pick<ChargeCodePolicy, 'requirePin' | 'requireAuthorisedUser'>;
  /** the PIN hash the request's PIN matched before the sale took its locks (verifyChargeCodePin), null when none */
  verifiedPinHash: string | null;
  recipientEmail: string | null;
};

/**
 * What validation reads of a charge code. Dates are Date objects from a plain query and
 * ISO strings when the row arrives as JSON inside a larger statement.
 */
export type ChargeCodeForCheck = {
  id: number;
  code: string;
  valid_from: Date | string;
  valid_until: Date | string;
  on_hold: boolean;
  hold_reason: string | null;
  pin_hash: string | null;
  excluded_category_ids: number[];
  authorised_emails: string[];
};

/** Codes a user could pick now: within their validity window and not on hold. */
export async function availableChargeCodes(db: Db, now = new Date()): Promise<string[]> {
  return db('charge_codes')
    .where('valid_from', '<=', now)
    .andWhere('valid_until', '>=', now)
    .andWhere('on_hold', false)
    .orderBy('code')
    .pluck('code');
}

/**
 * The one charge code validation (draft save, charge-code change, processing) of a row read
 * with chargeCodeForCheckSql (chargecodes.queries.ts; undefined: no such code): existence, then usableChargeCode's rules.
 * Only an unknown code at processing reads the database again, for the list of available codes.
 */
export async function checkChargeCode(
  db: Db,
  row: ChargeCodeForCheck | null | undefined,
  code: string,
  check: ChargeCodeCheck,
): Promise<ChargeCodeForCheck> {
  if (check.requester !== undefined && !(row && isAuthorised(row, check.requester))) throw notAuthorised(code);
  if (!row) {
    let message = `Invalid charge code: '${code}' does not exist`;
    if (check.processing) {
      const available = await availableChargeCodes(db, check.now);
      message += `. Available codes: ${available.length > 0 ? available.join(', ') : 'none'}`;
    }
    throw BadRequest(message);
  }
  return usableChargeCode(row, check);
}

/**
 * The rules for a code that exists, without the database: validity window (both ends included),
 * hold, category exclusions, and for a sale the policies of the settings (PIN, recipient), in
 * that order. Throws the first one broken; returns the row.
 */
export function usableChargeCode(row: ChargeCodeForCheck, check: ChargeCodeCheck): ChargeCodeForCheck {
  const now = check.now ?? new Date();
  const [validFrom, validUntil] = [new Date(row.valid_from), new Date(row.valid_until)];
  if (validUntil.getTime() < now.getTime()) {
    throw BadRequest(`Charge code '${row.code}' has expired on ${formatUsDate(validUntil)}.`);
  }
  if (validFrom.getTime() > now.getTime()) {
    throw BadRequest(`Charge code '${row.code}' is not yet valid until ${formatUsDate(validFrom)}.`);
  }
  if (row.on_hold) {
    throw BadRequest(`Charge code '${row.code}' is on hold: ${row.hold_reason ?? ''}`);
  }
  if (check.categoryIds.some((id) => row.excluded_category_ids.includes(id))) {
    throw BadRequest(
      `Charge code '${row.code}' cannot be used for some items in this quote due to category restrictions.`,
    );
  }
  if (check.sale) checkSaleAuthorisation(row, check.sale);
  return row;
}

function checkSaleAuthorisation(
  row: ChargeCodeForCheck,
  { policy, verifiedPinHash, recipientEmail }: SaleAuthorisation,
) {
  // The PIN was checked before the sale took its locks; this row, read under them, may be another code (the quote's changed) or have a new PIN.
  if (policy.requirePin && row.pin_hash !== null && row.pin_hash !== verifiedPinHash) {
    throw Conflict(
      `Charge code '${row.code}' or its PIN changed while the sale was being made; nothing was sold. Try again.`,
    );
  }
  if (policy.requireAuthorisedUser) checkAuthorisedRecipient(row, recipientEmail);
}

/**
 * A requester's one refusal for a code they are not authorised on, whether it exists, is held or
 * is unknown (the status and words of the authorised-user check): codes cannot be enumerated, and
 * a hold's reason reaches only the code's authorised people and the staff.
 */
const notAuthorised = (code: string) => BadRequest(`You are not authorised on charge code '${code}'`);

const isAuthorised = (row: Pick<ChargeCodeForCheck, 'authorised_emails'>, email: string) =>
  row.authorised_emails.some((authorised) => authorised.toLowerCase() === email.toLowerCase());

/** chargeCodes.requireAuthorisedUser: the recipient's email is one of the code's authorised users (case-insensitively). */
function checkAuthorisedRecipient(
  row: Pick<ChargeCodeForCheck, 'code' | 'authorised_emails'>,
  recipientEmail: string | null,
) {
  if (!recipientEmail) {
    throw BadRequest(`Charge code '${row.code}' requires the recipient's email, one of its authorised users`);
  }
  if (!isAuthorised(row, recipientEmail)) {
    throw BadRequest(`Recipient '${recipientEmail}' is not an authorised user of charge code '${row.code}'`);
  }
}

/** checkAuthorisedRecipient against the code as it is now, for a recipient recorded after the sale. */
export async function validateAuthorisedRecipient(db: Db, code: string, recipientEmail: string | null): Promise<void> {
  const { rows } = await preparedRaw<{ rows: ChargeCodeForCheck[] }>(db, chargeCodeForCheckSql('cc', sql`${code}`));
  checkAuthorisedRecipient(rows[0] ?? { code, authorised_emails: [] }, recipientEmail);
}

/** Wrong PINs a code takes from one person in a window before that person's attempts on it are refused until the window ends. */
const PIN_ATTEMPTS = { points: 5, durationSeconds: 15 * 60 };

const pinAttempts = (db: Db) =>
  rateLimitCounter(db, 'chargecode_pin', PIN_ATTEMPTS.points, PIN_ATTEMPTS.durationSeconds);

/**
 * chargeCodes.requirePin, before the sale takes any lock: the request's PIN against the code's
 * hash. Returns the hash it matched; null when the code has no PIN, or does not exist (the sale's
 * checks say so). The counter is per code and person (the signed-in user typing it), in
 * PostgreSQL: one person's wrong PINs do not lock the code for everyone else. An attempt takes
 * its point before the (slow) scrypt check, so a parallel burst cannot guess past the limit, and
 * a right PIN gives it back.
 */
export async function verifyChargeCodePin(
  db: Db,
  code: string,
  pin: string | undefined,
  personId: string,
): Promise<string | null> {
  const row = await db<{ code: string; pin_hash: string | null }>('charge_codes')
    .where({ code })
    .first('code', 'pin_hash');
  if (!row?.pin_hash) return null;
  if (!pin) throw BadRequest(`Charge code '${row.code}' requires its PIN`);
  const attempts = pinAttempts(db);
  const key = `${row.code} ${personId}`;
  try {
    await attempts.consume(key);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    const seconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
    throw TooManyRequests(
      `Too many incorrect PINs for charge code '${row.code}'; try again in ${Math.ceil(seconds / 60)} minute(s)`,
      seconds,
    );
  }
  if (!(await verifyPassword(pin, row.pin_hash))) throw BadRequest(`Incorrect PIN for charge code '${row.code}'`);
  await attempts.reward(key, 1);
  return row.pin_hash;
}

/** Reads the code and checks it (checkChargeCode) in one call, for paths with nothing else to read. */
export async function validateChargeCode(db: Db, code: string, check: ChargeCodeCheck): Promise<ChargeCodeForCheck> {
  const { rows } = await preparedRaw<{ rows: ChargeCodeForCheck[] }>(db, chargeCodeForCheckSql('cc', sql`${code}`));
  return checkChargeCode(db, rows[0], code, check);
}
