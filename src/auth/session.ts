import session from 'express-session';
import connectPgSimple from 'connect-pg-simple';
import type { Request, RequestHandler } from 'express';
import type { IncomingMessage } from 'node:http';
import type { Pool } from 'pg';
import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config';
import { leftJoinUserRow, userRowSelect } from '../modules/users/users.queries';
import { usersService, type UserRow } from '../modules/users/users.service';
import { sql } from '../db/sql';

export const SESSION_COOKIE = 'connect.sid';
const REFRESH_INTERVAL_MS = 60_000;

/**
 * SESSION_SECRET, or one generated on first start and kept in DATA_DIR. Instances sharing DATA_DIR
 * and started at once must end with the same secret: each writes its own whole file under a
 * temporary name and links it into place, which fails if another did first; then every one reads
 * what is in place. (An exclusive create written afterwards would let the other read it empty.)
 */
export async function resolveSessionSecret(config: Config): Promise<string> {
  if (config.sessionSecret) return config.sessionSecret;
  const file = path.join(config.dataDir, 'session-secret');
  const existing = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (existing !== undefined) return existing.trim();
  await fs.mkdir(config.dataDir, { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await fs.writeFile(temporary, randomBytes(48).toString('base64url') + '\n', { mode: 0o600, flag: 'wx' });
  try {
    await fs.link(temporary, file).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  } finally {
    await fs.rm(temporary, { force: true });
  }
  return (await fs.readFile(file, 'utf8')).trim();
}

export function configurePassportSessions(passport: Deps['passport'], db: Knex): void {
  passport.serializeUser((user, done) => done(null, (user as UserRow).id));
  passport.deserializeUser((req: IncomingMessage, id: string, done: (err: unknown, user?: UserRow | false) => void) => {
    const loaded = (req as Request).session?.loadedUser;
    const user = loaded?.id === id ? Promise.resolve(loaded) : usersService(db).findById(id);
    user
      // An inactive or removed user loses every session at once.
      .then((row) => done(null, row && row.is_active ? row : false))
      .catch(done);
  });
}

/**
 * connect-pg-simple, reading the session's user in the same query as the session, so an
 * authenticated request costs one round trip before its own work instead of two; the read is a
 * named prepared statement (every session request makes it), parsed and planned once per
 * connection; in transaction pool mode the pool's connections drop the name (src/db/knex.ts). The user row rides on the loaded session as `loadedUser` for deserializeUser and
 * is never stored.
 */
function userJoiningStore(PgStore: ReturnType<typeof connectPgSimple>, pool: Pool) {
  // Sent through the pool as it is (the sid is pg's $1): the fragments here carry no values.
  const read = {
    name: 'session_with_user',
    text: sql`SELECT s.sess, ${userRowSelect} FROM sessions s
             ${leftJoinUserRow(sql.raw(`(s.sess -> 'passport' ->> 'user')::uuid`))}
            WHERE s.sid = $1 AND s.expire >= now()`.text,
  };
  return class UserJoiningStore extends PgStore {
    override get(sid: string, callback: (err: unknown, session?: session.SessionData | null) => void): void {
      pool
        .query<{ sess: session.SessionData } & Partial<UserRow>>({ ...read, values: [sid] })
        .then(({ rows: [row] }) => {
          if (!row) return callback(null, null);
          const { sess, ...user } = row;
          callback(null, user.id ? { ...sess, loadedUser: user as UserRow } : sess);
        }, callback);
    }

    override set(sid: string, sess: session.SessionData, callback?: (err?: unknown) => void): void {
      const { loadedUser: _notStored, ...stored } = sess;
      super.set(sid, stored as session.SessionData, callback);
    }
  };
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
  passport: Deps['passport'];
}): RequestHandler[] {
  const Store = userJoiningStore(connectPgSimple(session), opts.pool);
  const store = new Store({
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

/** Signs the user in on this request's session (local login and single sign-on alike). */
export function startSession(req: Request, user: UserRow): Promise<void> {
  // passport regenerates the session id here, so a planted session id is worthless.
  return new Promise((resolve, reject) =>
    req.login(user, (err) => {
      if (err) return reject(err);
      req.session.signedInAt = Date.now();
      req.session.lastSeenAt = Date.now();
      resolve();
    }),
  );
}

/** Signs out and destroys the session (nothing to do without one). */
export function endSession(req: Request): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!req.session) return resolve();
    req.logout({ keepSessionInfo: false }, (err) => {
      if (err) return reject(err);
      req.session.destroy((destroyErr) => (destroyErr ? reject(destroyErr) : resolve()));
    });
  });
}

/** Destroys the session (and its stored row) without signing out first: after a restore, whose sessions table is empty. */
export function destroySession(req: Request): Promise<void> {
  return new Promise((resolve, reject) => req.session.destroy((err) => (err ? reject(err) : resolve())));
}
