import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/http/errors';
import { holdSeniorityRefusal } from '../../src/modules/chargecodes/chargecodes.policy';
import { CreateChargeCode } from '../../src/modules/chargecodes/chargecodes.schemas';
import {
  formatUsDate,
  usableChargeCode,
  type ChargeCodeCheck,
  type ChargeCodeForCheck,
  type SaleAuthorisation,
} from '../../src/modules/chargecodes/chargecodes.validation';

/** A code valid through the first quarter of 2026, as created with plain dates. */
const { validFrom, validUntil } = CreateChargeCode.parse({
  code: 'CC-100',
  title: 'Physics teaching',
  validFrom: '2026-01-01',
  validUntil: '2026-03-31',
});

const chargeCode = (changes: Partial<ChargeCodeForCheck> = {}): ChargeCodeForCheck => ({
  id: 1,
  code: 'CC-100',
  valid_from: validFrom,
  valid_until: validUntil,
  on_hold: false,
  hold_reason: null,
  pin_hash: null,
  excluded_category_ids: [],
  authorised_emails: [],
  ...changes,
});

const MID_QUARTER = new Date('2026-02-15T12:00:00Z');

/** The refusal as the API answers it, or undefined when the code may be used. */
function refusal(row: ChargeCodeForCheck, check: Partial<ChargeCodeCheck> = {}) {
  try {
    expect(usableChargeCode(row, { categoryIds: [], now: MID_QUARTER, ...check })).toBe(row);
    return undefined;
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return { status: error.status, message: error.message };
  }
}

const sale = (changes: Partial<SaleAuthorisation> = {}): SaleAuthorisation => ({
  policy: { requirePin: false, requireAuthorisedUser: false },
  verifiedPinHash: null,
  recipientEmail: null,
  ...changes,
});

describe('the validity window of a charge code', () => {
  it('takes a plain end date as the whole of that UTC day, a plain start date from its start', () => {
    expect(validFrom).toEqual(new Date('2026-01-01T00:00:00.000Z'));
    expect(validUntil).toEqual(new Date('2026-03-31T23:59:59.999Z'));
  });

  it('is usable through the last millisecond of its last day, and expired from the next', () => {
    expect(refusal(chargeCode(), { now: new Date('2026-03-31T23:59:59.999Z') })).toBeUndefined();
    expect(refusal(chargeCode(), { now: new Date('2026-04-01T00:00:00.000Z') })).toEqual({
      status: 400,
      message: "Charge code 'CC-100' has expired on 03/31/2026.",
    });
  });

  it('is usable from the first millisecond of its first day, not before', () => {
    expect(refusal(chargeCode(), { now: new Date('2026-01-01T00:00:00.000Z') })).toBeUndefined();
    expect(refusal(chargeCode(), { now: new Date('2025-12-31T23:59:59.999Z') })).toEqual({
      status: 400,
      message: "Charge code 'CC-100' is not yet valid until 01/01/2026.",
    });
  });

  it('reads the dates the same as ISO strings, as a row arrives inside a JSON value', () => {
    const fromJson = chargeCode({ valid_from: validFrom.toISOString(), valid_until: validUntil.toISOString() });
    expect(refusal(fromJson, { now: new Date('2026-03-31T23:59:59.999Z') })).toBeUndefined();
    expect(refusal(fromJson, { now: new Date('2026-04-01T00:00:00.000Z') })?.message).toMatch(
      /has expired on 03\/31\/2026/,
    );
  });

  it('writes dates as MM/DD/YYYY of the UTC day', () => {
    expect(formatUsDate(new Date('2026-03-05T23:30:00-05:00'))).toBe('03/06/2026');
    expect(formatUsDate(new Date('2026-12-31T23:59:59.999Z'))).toBe('12/31/2026');
  });
});

describe('holds and category exclusions', () => {
  it('refuses a code on hold, with its reason', () => {
    expect(refusal(chargeCode({ on_hold: true, hold_reason: 'Budget frozen' }))).toEqual({
      status: 400,
      message: "Charge code 'CC-100' is on hold: Budget frozen",
    });
    expect(refusal(chargeCode({ on_hold: true }))?.message).toBe("Charge code 'CC-100' is on hold: ");
  });

  it('says an expired code has expired before saying it is on hold', () => {
    const expiredAndHeld = chargeCode({ on_hold: true, hold_reason: 'Budget frozen' });
    expect(refusal(expiredAndHeld, { now: new Date('2026-06-01T00:00:00Z') })?.message).toMatch(/has expired/);
  });

  it('refuses a code for lines of any category it excludes', () => {
    const excluding = chargeCode({ excluded_category_ids: [5, 9] });
    expect(refusal(excluding, { categoryIds: [3, 5] })).toEqual({
      status: 400,
      message: "Charge code 'CC-100' cannot be used for some items in this quote due to category restrictions.",
    });
    expect(refusal(excluding, { categoryIds: [3, 4] })).toBeUndefined();
    expect(refusal(excluding, { categoryIds: [] })).toBeUndefined();
  });
});

describe("a sale under the settings' charge-code policies", () => {
  it('with a PIN required, refuses a code whose PIN changed after the PIN was checked', () => {
    const withPin = chargeCode({ pin_hash: 'scrypt$current' });
    const requirePin = { requirePin: true, requireAuthorisedUser: false };
    expect(refusal(withPin, { sale: sale({ policy: requirePin, verifiedPinHash: 'scrypt$current' }) })).toBeUndefined();
    expect(refusal(withPin, { sale: sale({ policy: requirePin, verifiedPinHash: 'scrypt$before' }) })).toEqual({
      status: 409,
      message: "Charge code 'CC-100' or its PIN changed while the sale was being made; nothing was sold. Try again.",
    });
    expect(refusal(chargeCode(), { sale: sale({ policy: requirePin }) })).toBeUndefined();
  });

  it('without the PIN policy, ignores the PIN', () => {
    expect(refusal(chargeCode({ pin_hash: 'scrypt$current' }), { sale: sale() })).toBeUndefined();
  });

  it('with authorised users required, takes only a recipient who is one of them, in any case', () => {
    const listed = chargeCode({ authorised_emails: ['Ann.Smith@example.org', 'bo@example.org'] });
    const policy = { requirePin: false, requireAuthorisedUser: true };
    expect(refusal(listed, { sale: sale({ policy, recipientEmail: 'ann.smith@EXAMPLE.org' }) })).toBeUndefined();
    expect(refusal(listed, { sale: sale({ policy, recipientEmail: 'eve@example.org' }) })).toEqual({
      status: 400,
      message: "Recipient 'eve@example.org' is not an authorised user of charge code 'CC-100'",
    });
    expect(refusal(listed, { sale: sale({ policy, recipientEmail: null }) })).toEqual({
      status: 400,
      message: "Charge code 'CC-100' requires the recipient's email, one of its authorised users",
    });
  });

  it('applies the policies only to a sale, after the code itself is found usable', () => {
    const policy = { requirePin: false, requireAuthorisedUser: true };
    expect(refusal(chargeCode())).toBeUndefined();
    expect(refusal(chargeCode({ on_hold: true }), { sale: sale({ policy }) })?.message).toMatch(/is on hold/);
  });
});

describe('who may change or release a hold', () => {
  const as = (role: Express.User['role']) => ({ role }) as Express.User;

  it('someone at least as senior as its placer', () => {
    expect(holdSeniorityRefusal('user', as('user'), 'change')).toBeNull();
    expect(holdSeniorityRefusal('manager', as('admin'), 'release')).toBeNull();
    expect(holdSeniorityRefusal('admin', as('admin'), 'release')).toBeNull();
  });

  it('names the roles that may, when the person is less senior', () => {
    expect(holdSeniorityRefusal('manager', as('user'), 'change')).toBe(
      'This hold was placed by a manager; only a manager or an admin can change it',
    );
    expect(holdSeniorityRefusal('admin', as('manager'), 'release')).toBe(
      'This hold was placed by an admin; only an admin can release it',
    );
  });

  it('leaves a hold with no recorded placer to the hold role setting alone', () => {
    expect(holdSeniorityRefusal(null, as('user'), 'release')).toBeNull();
  });
});
