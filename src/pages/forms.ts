import type { Request, RequestHandler } from 'express';
import { ZodError } from 'zod';
import { HttpError } from '../http/errors';
import { validationErrors } from '../http/validate';
import { memoryUpload } from '../http/uploads';
import { csrfProtection } from '../auth/form-tokens';
import { UnknownItemCode } from '../modules/items/items.unknown-code';

/**
 * A scanned or typed code no item answers to, in the same words on every page (the counter, receiving,
 * stocktakes): a code may be a SKU or any barcode. The API keeps its own documented message.
 */
export const unknownCodeMessage = (code: string) => `No item with code '${code}'`;

/** What a refusal says on a page: a code no item answers to in the pages' one sentence, anything else as the service said it. */
export const pageMessage = (err: HttpError) =>
  err instanceof UnknownItemCode ? unknownCodeMessage(err.itemCode) : err.message;

/** Field name -> message, shown beside each field. */
export type FieldErrors = Record<string, string>;
export type Attempt<T> = { ok: true; value: T } | { ok: false; status: number; message: string; errors: FieldErrors };

/** One of a page's forms coming back with what was typed and what to fix (a page shows several forms; `form` names which). */
export type ReturnedForm<Name extends string = string> = {
  form: Name;
  status: number;
  message: string;
  errors: FieldErrors;
  values: Record<string, unknown>;
};

/** What a form shows: what was typed, the message and each field's error (none on a fresh form). */
export type FormState = { values: Record<string, unknown>; errors: FieldErrors; message: string | null };

/** A form of the page: what came back for it, or its starting values. */
export const formState = <Name extends string>(
  returned: ReturnedForm<Name> | null,
  name: Name,
  values: Record<string, unknown>,
): FormState =>
  returned?.form === name
    ? { values: returned.values, errors: returned.errors, message: returned.message }
    : { values, errors: {}, message: null };

const FIX_IT = 'Please correct the fields marked below';

/**
 * Runs a form's action. What the person can fix (the API schema's field errors, a service's
 * 400 {errors} or its 409/422 message) comes back to re-render the form with what was typed;
 * anything else (403, 404, a fault) is thrown on to the error page. A refused form answers 422
 * (the request was understood, its content was not acceptable) or the refusal's own status.
 */
export async function attempt<T>(
  action: () => T | Promise<T>,
  formStatuses: number[] = [400, 409, 422],
): Promise<Attempt<T>> {
  try {
    return { ok: true, value: await action() };
  } catch (err) {
    if (err instanceof ZodError)
      return { ok: false, status: 422, message: FIX_IT, errors: byField(validationErrors(err)) };
    if (err instanceof HttpError && formStatuses.includes(err.status)) {
      const listed = Array.isArray(err.details?.errors)
        ? (err.details.errors as { field: string; message: string }[])
        : [];
      const status = err.status === 400 ? 422 : err.status;
      return { ok: false, status, message: listed.length > 0 ? FIX_IT : pageMessage(err), errors: byField(listed) };
    }
    throw err;
  }
}

const byField = (errors: { field: string; message: string }[]): FieldErrors =>
  Object.fromEntries(errors.map((e) => [e.field, e.message]));

/** A message for the next page this session shows (post/redirect/get). */
export function flash(req: Request, message: string): void {
  req.session.flash = message;
}

/**
 * A redirect that carries a flash goes out once the session is stored: express-session sends the
 * headers before its own save completes and the browser follows a 303 on the headers alone, so
 * the next page could read the session from before the flash and lose it.
 */
export const storeFlashBeforeRedirect: RequestHandler = (req, res, next) => {
  const redirect = res.redirect.bind(res) as (...args: unknown[]) => void;
  res.redirect = ((...args: unknown[]) => {
    if (req.session?.flash === undefined) return redirect(...args);
    req.session.save((err) => (err ? next(err) : redirect(...args)));
  }) as typeof res.redirect;
  next();
};

/**
 * A multipart form (a file upload): multer reads the body, then the CSRF token in it is
 * checked, which the page-wide check skips for multipart bodies it cannot read yet. A text field
 * may hold up to maxFieldBytes (multer's default is 1 MB).
 */
export function pageUpload(field: string, maxBytes: number, maxFieldBytes?: number): RequestHandler[] {
  const limits = { fileSize: maxBytes, files: 1, ...(maxFieldBytes ? { fieldSize: maxFieldBytes } : {}) };
  return [memoryUpload(limits).single(field), csrfProtection];
}

/** A form sends its empty fields as ''; the API's schemas read an absent field, so those are dropped. */
export const filledIn = (fields: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== ''));

/** A repeated form field (rows, ticked boxes) as a list of strings: one value arrives as a string, none as undefined. */
export const repeatedField = (value: unknown): string[] =>
  (Array.isArray(value) ? value : value === undefined ? [] : [value]).map(String);

/** A single form or query field as typed: anything but a string (absent, repeated) is ''. */
export const textField = (value: unknown): string => (typeof value === 'string' ? value : '');

/** A checkbox: present (any value) means on. */
export const checked = (value: unknown): boolean => value !== undefined && value !== '' && value !== 'false';
