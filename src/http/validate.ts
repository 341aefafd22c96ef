import type { RequestHandler } from 'express';
import { z } from 'zod';
// Before any schema here is made: zod 4 gives a schema .openapi() only if the extension ran first,
// and the production bundle may evaluate this module before any module that imports './openapi'.
import './openapi';
import { BadRequest } from './errors';

/** Parses input with a zod schema; a failure reaches the error middleware as a 400 listing every issue. */
export function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  return schema.parse(input);
}

/**
 * An object whose every property is its schema's output for its raw input, parsed when first read
 * (a ZodError then): a handler checks its input in the order it reads it, as its own `parse` calls would.
 */
export function parsedOnFirstRead(parts: Record<string, { schema: z.ZodType; raw: () => unknown }>): object {
  const input = {};
  for (const [name, { schema, raw }] of Object.entries(parts)) {
    let parsed: { value: unknown } | undefined;
    Object.defineProperty(input, name, {
      enumerable: true,
      get: () => (parsed ??= { value: parse(schema, raw()) }).value,
    });
  }
  return input;
}

export function validationErrors(error: z.ZodError): { field: string; message: string }[] {
  return error.issues.map((issue) => ({
    field: issue.path.length > 0 ? issue.path.join('.') : '(body)',
    message: issue.message,
  }));
}

/** The largest value PostgreSQL's int column holds. */
export const MAX_INT4 = 2_147_483_647;

/** A positive int4 id taken from a path or query string ("abc" or "1.5" is a 400, not a 500). */
export const IntId = z.coerce
  .number({ error: 'must be a positive integer' })
  .int({ error: 'must be a positive integer' })
  .positive({ error: 'must be a positive integer' })
  .max(MAX_INT4, { error: 'is too large' });

export const IdParams = z.object({ id: IntId });

/** A date (YYYY-MM-DD, a whole UTC day) or an ISO 8601 timestamp, as list filters take them. */
export const DateOrTimestamp = z
  .string()
  .trim()
  .refine((v) => /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(v) && !Number.isNaN(Date.parse(v)), {
    error: 'must be a date (YYYY-MM-DD) or an ISO 8601 timestamp',
  });

/** A query-string flag: only 'true'/'false' (and 1/0) are accepted. */
export const QueryBoolean = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** A decimal given as a string or a number, returned as a canonical string with the given places. */
export function decimalString(opts: { places: number; min?: number; max?: number; label?: string }) {
  return z.union([z.string(), z.number()]).transform((v, ctx) => {
    const text = typeof v === 'number' ? String(v) : v.trim();
    if (!/^-?\d+(\.\d+)?$/.test(text)) {
      ctx.addIssue({ code: 'custom', message: `must be a decimal number` });
      return z.NEVER;
    }
    const value = Number(text);
    if (opts.min !== undefined && value < opts.min) {
      ctx.addIssue({ code: 'custom', message: `must be at least ${opts.min}` });
      return z.NEVER;
    }
    if (opts.max !== undefined && value > opts.max) {
      ctx.addIssue({ code: 'custom', message: `must be at most ${opts.max}` });
      return z.NEVER;
    }
    const [, fraction = ''] = text.split('.');
    if (fraction.length > opts.places) {
      ctx.addIssue({ code: 'custom', message: `must have at most ${opts.places} decimal places` });
      return z.NEVER;
    }
    return text;
  });
}

const NUL = '\u0000';
const NUL_MESSAGE = 'must not contain a NUL character';

function fieldsWithNul(value: unknown, path: string, found: string[]): void {
  if (typeof value === 'string') {
    if (value.includes(NUL)) found.push(path || '(body)');
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => fieldsWithNul(v, path ? `${path}.${i}` : String(i), found));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key.includes(NUL)) found.push(path ? `${path}.${key}` : key);
      fieldsWithNul(v, path ? `${path}.${key}` : key, found);
    }
  }
}

/**
 * PostgreSQL stores no NUL character in text or jsonb. One in a JSON body, a query parameter
 * or the path is refused here as a 400 naming its field, before any handler sees it.
 */
export const refuseNulCharacters: RequestHandler = (req, _res, next) => {
  const found: string[] = [];
  if (/%00/i.test(req.path) || req.path.includes(NUL)) found.push('(path)');
  fieldsWithNul(req.query, '', found);
  fieldsWithNul(req.body, '', found);
  if (found.length === 0) return next();
  next(BadRequest('Validation failed', { errors: found.map((field) => ({ field, message: NUL_MESSAGE })) }));
};
