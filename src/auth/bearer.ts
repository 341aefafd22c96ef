import type { RequestHandler } from 'express';
import type { Knex } from 'knex';
import { Unauthorized } from '../http/errors';
import { tokensService } from './tokens.service';

/** `Authorization: Bearer <token>` acts as the token's user; a bad token is a 401, never a fallback to the session. */
export function bearerAuth(db: Knex): RequestHandler {
  const tokens = tokensService(db);
  return async (req, _res, next) => {
    const header = req.get('authorization');
    if (!header) return next();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return next(Unauthorized('Malformed Authorization header'));
    const user = await tokens.authenticate(match[1]);
    if (!user) return next(Unauthorized('Invalid or expired token'));
    req.user = user;
    req.authMethod = 'bearer';
    next();
  };
}
