import session from 'express-session';
import connectPgSimple from 'connect-pg-simple';
import type { RequestHandler } from 'express';
import type { Pool } from 'pg';
import type { Knex } from 'knex';
import type { PassportStatic } from 'passport';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config';
import { usersService, type UserRow } from '../modules/users/users.service';

export const SESSION_COOKIE = 'connect.sid';
const REFRESH_INTERVAL_MS = 60_000;

/** SESSION_SECRET, or one generated on first start and kept in DATA_DIR. */
export async function resolveSessionSecret(config: Config): Promise<string> {
  if (config.sessionSecret) return config.sessionSecret;
  const file = path.join(config.dataDir, 'session-secret');
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch {
    const secret = randomBytes(48).toString('base64url');
    await fs.mkdir(config.dataDir, { recursive: true });
    await fs.writeFile(file, secret + '\n', { mode: 0o600, flag: 'wx' }).catch(() => undefined);
    return (await fs.readFile(file, 'utf8')).trim();
  }
}

export function configurePassportSessions(passport: PassportStatic, db: Knex): void {
  passport.serializeUser((user, done) => done(null, (user as UserRow).id));
  passport.deserializeUser((id: string, done) => {
    usersService(db)
      .findById(id)
      // An inactive or removed user loses every session at once.
      .then((user) => done(null, user && user.is_active ? user : false))
      .catch(done);
  });
}

/**
 * Session cookie + PostgreSQL store + passport. The store row is written when the session
 * changes, which the freshness step makes happen at most once a minute: that is the rolling
 * idle timeout. The absolute lifetime is enforced here too, server-side.
 */
export function sessionMiddleware(opts: {
  config: Config;
  secret: string;
  pool: Pool;
  passport: PassportStatic;
}): RequestHandler[] {
  const PgStore = connectPgSimple(session);
  const store = new PgStore({
    pool: opts.pool,
    tableName: 'sessions',
    createTableIfMissing: false,
    pruneSessionInterval: false,
    disableTouch: true,
  });
  const sessions = session({
    name: SESSION_COOKIE,
    secret: opts.secret,
    store,
    resave: false,
    saveUninitialized: false,
    rolling: false,
    proxy: undefined,
    cookie: {
      httpOnly: true,
      sameSite: 'lax',
      secure: opts.config.secureCookies,
      maxAge: opts.config.sessionIdleMs,
    },
  });
  const maxAgeMs = opts.config.sessionMaxAgeMs;
  const freshness: RequestHandler = (req, _res, next) => {
    if (!req.user) return next();
    const now = Date.now();
    req.authMethod = 'session';
    req.session.signedInAt ??= now;
    if (now - req.session.signedInAt > maxAgeMs) {
      req.user = undefined;
      return req.session.destroy((err) => next(err));
    }
    if (!req.session.lastSeenAt || now - req.session.lastSeenAt > REFRESH_INTERVAL_MS) req.session.lastSeenAt = now;
    next();
  };
  return [sessions, opts.passport.initialize(), opts.passport.session(), freshness];
}
