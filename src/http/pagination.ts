import { z } from 'zod';
import { IntId } from './validate';
import './openapi';

/** `page` of a paged list: a positive integer, default 1. */
export const PageParam = IntId.default(1);

/** `limit` of a list: 1..max, with the default the spec gives for that list. */
export function limitParam(defaultLimit: number, max: number) {
  const message = `must be an integer between 1 and ${max}`;
  return z.coerce
    .number({ error: message })
    .int({ error: message })
    .min(1, { error: message })
    .max(max, { error: message })
    .default(defaultLimit)
    .openapi({ description: `default ${defaultLimit}, max ${max}` });
}

export const pageInfo = (page: number, limit: number, total: number) => ({
  page,
  limit,
  total,
  totalPages: Math.ceil(total / limit),
});
