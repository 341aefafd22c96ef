import type { ZxcvbnFactory } from '@zxcvbn-ts/core';
import { BadRequest } from '../http/errors';

/** A new password (creation, reset, change, the first admin's); existing shorter ones still sign in. */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_TOO_SHORT = `must be at least ${PASSWORD_MIN_LENGTH} characters`;
export const PASSWORD_ONLY_WHITESPACE = 'must not be only spaces';
export const PASSWORD_PERSONAL = 'must not be or contain the email address or name of its account';
export const PASSWORD_COMMON = 'is too common or easy to guess: try a phrase of several unrelated words';

/** Whose password it is: their email and names are refused in it. */
export type PasswordOwner = { email: string; firstName?: string; lastName?: string };

/** zxcvbn's score (0 to 4) a new password needs: 3 is "safely unguessable" against an online attack. */
const MIN_SCORE = 3;
// a name or email part shorter than this ("Li", "Jo") is too short to refuse in a password
const MIN_PERSONAL_PART = 3;

let estimator: Promise<ZxcvbnFactory> | undefined;
/** zxcvbn with its dictionaries holds about 30 MB, so it is loaded on the first new password, not at start. */
function loadEstimator(): Promise<ZxcvbnFactory> {
  estimator ??= Promise.all([
    import('@zxcvbn-ts/core'),
    import('@zxcvbn-ts/language-common'),
    import('@zxcvbn-ts/language-en'),
  ]).then(
    ([core, common, en]) =>
      new core.ZxcvbnFactory({
        dictionary: { ...common.dictionary, ...en.dictionary },
        graphs: common.adjacencyGraphs,
        translations: en.translations,
      }),
  );
  return estimator;
}

function personalParts(owner: PasswordOwner): string[] {
  const localPart = owner.email.split('@')[0];
  const names = [owner.firstName, owner.lastName, `${owner.firstName ?? ''}${owner.lastName ?? ''}`];
  return [owner.email, localPart, ...names]
    .map((part) => (part ?? '').trim().toLowerCase())
    .filter((part) => part.length >= MIN_PERSONAL_PART)
    .sort((a, b) => b.length - a.length);
}

/**
 * The one rule for a new password, wherever one is set: what is wrong with it, or undefined.
 * "Containing" the email or a name means what is left once they are taken out is too short to
 * be a password on its own, so "ann.smith@x" refuses "Ann.Smith2024!" but not a long phrase that
 * happens to include "ann".
 */
export async function passwordProblem(password: string, owner: PasswordOwner): Promise<string | undefined> {
  if (password.length < PASSWORD_MIN_LENGTH) return PASSWORD_TOO_SHORT;
  if (password.trim() === '') return PASSWORD_ONLY_WHITESPACE;
  const parts = personalParts(owner);
  const rest = parts.reduce((left, part) => left.split(part).join(''), password.toLowerCase());
  if (rest.length < PASSWORD_MIN_LENGTH && rest.length < password.length) return PASSWORD_PERSONAL;
  const { score } = (await loadEstimator()).check(password, parts);
  return score < MIN_SCORE ? PASSWORD_COMMON : undefined;
}

/** Refuses a new password as a validation failure naming its field (the spec's {message, errors}). */
export async function assertAcceptablePassword(password: string, owner: PasswordOwner, field: string): Promise<void> {
  const problem = await passwordProblem(password, owner);
  if (problem) throw BadRequest('Validation failed', { errors: [{ field, message: problem }] });
}
