import { z } from 'zod';
import { isIP } from 'node:net';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PASSWORD_HASH_COST } from './auth/passwords';
import { passwordProblem } from './auth/password-rule';
import { Role } from './auth/roles';

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** One entry of Express's `trust proxy` list: a name (loopback, linklocal, uniquelocal), an address, or address/prefix or address/netmask. */
function isProxyEntry(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const [address, range, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (range === undefined) return true;
  if (/^\d{1,3}$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(range) === 4;
}

/** TRUST_PROXY: a hop count, or a comma list of proxies Express trusts for X-Forwarded-*. */
const TrustProxy = z
  .string()
  .trim()
  .transform((value, ctx): number | string[] => {
    if (/^\d+$/.test(value)) return Number(value);
    const entries = value
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean);
    const bad = entries.filter((v) => !isProxyEntry(v));
    if (entries.length === 0 || bad.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a hop count or a comma list of addresses, CIDR ranges, loopback, linklocal or uniquelocal (not ${bad.join(', ') || 'empty'})`,
      });
      return z.NEVER;
    }
    return entries;
  });

/** the default cost under NODE_ENV=test, where the suite hashes and verifies thousands of times */
export const TEST_PASSWORD_HASH_COST = 12;

const EnvSchema = z.object({
  // production unless said otherwise: no error details in responses (npm run dev says development)
  NODE_ENV: z.enum(['development', 'production', 'test']).default('production'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  // a workstation's npm start is not reachable from the network unless asked; the Docker image sets 0.0.0.0
  HOST: z.string().default('127.0.0.1'),
  DATABASE_URL: z.string().url().optional(),
  // issue 44: what DATABASE_URL reaches: PostgreSQL itself or a session pooler, or PgBouncer in transaction mode
  DATABASE_POOL_MODE: z.enum(['session', 'transaction']).default('session'),
  // issue 44: a session connection to the primary for migrations, LISTEN, job locks and pg_dump (default DATABASE_URL)
  DATABASE_DIRECT_URL: z.string().url().optional(),
  DATA_DIR: z.string().default('./data'),
  EMBEDDED_PG_PORT: z.coerce.number().int().min(1).max(65535).default(54329),
  SESSION_SECRET: z.string().min(16).optional(),
  SESSION_IDLE_MINUTES: z.coerce
    .number()
    .int()
    .positive()
    .default(8 * 60),
  SESSION_MAX_HOURS: z.coerce
    .number()
    .int()
    .positive()
    .default(7 * 24),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PUBLIC_URL: z.string().url().default('http://localhost:3000'),
  ADMIN_EMAIL: z.string().email().optional(),
  // judged by checkAdminPassword, the rule every new password follows (it needs the email, and loads a dictionary)
  ADMIN_PASSWORD: z.string().optional(),
  OIDC_ISSUER_URL: z.string().url().optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().optional(),
  OIDC_PROVIDER_NAME: z.string().default('University SSO'),
  OIDC_SCOPES: z.string().default('openid profile email'),
  SSO_DEFAULT_ROLE: Role.default('user'),
  LOCAL_AUTH: booleanFlag.default(true),
  LOGIN_MAX_FAILURES: z.coerce.number().int().positive().default(10),
  LOGIN_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().positive().default(100),
  LOGIN_MAX_FAILURES_PER_DAY: z.coerce.number().int().positive().default(100),
  LOGIN_DELAY_BASE_MS: z.coerce.number().int().min(0).max(1000).optional(),
  TRUST_PROXY: TrustProxy.default(['loopback']),
  PASSWORD_HASH_COST: z.coerce.number().int().min(10).max(20).optional(),
  WEBHOOK_SECRET: z.string().min(16).optional(),
  PG_BIN_DIR: z.string().optional(),
  SHUTDOWN_DRAIN_SECONDS: z.coerce.number().int().min(0).max(300).optional(),
  SMTP_URL: z
    .string()
    .url()
    .refine((url) => /^smtps?:\/\//.test(url), 'must start with smtp:// or smtps://')
    .optional(),
  MAIL_FROM: z.string().min(3).optional(),
  OUTBOX_RETRY_BASE_MS: z.coerce.number().int().positive().default(30_000),
  OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: z.string().optional(),
});

/** Every variable the service reads (.env.example lists each). */
export const CONFIG_VARIABLES = Object.keys(EnvSchema.shape);

export type Config = {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  databaseUrl?: string;
  /**
   * transaction: DATABASE_URL is PgBouncer in transaction mode, so the service names no prepared
   * statements, sends no startup options (each transaction sets its timeouts with SET LOCAL) and
   * keeps no session state between transactions (docs/operations.md)
   */
  databasePoolMode: DatabasePoolMode;
  /** a session connection to the primary (migrations, the outbox's LISTEN, job locks, pg_dump); absent: DATABASE_URL */
  databaseDirectUrl?: string;
  dataDir: string;
  embeddedPgPort: number;
  sessionSecret?: string;
  sessionIdleMs: number;
  sessionMaxAgeMs: number;
  logLevel: string;
  /** after a SIGTERM, how long requests are still accepted while /api/health says 503 (ms) */
  shutdownDrainMs: number;
  publicUrl: string;
  secureCookies: boolean;
  admin?: { email: string; password: string };
  oidc?: { issuerUrl: string; clientId: string; clientSecret: string; providerName: string; scopes: string[] };
  oidcProviderName: string;
  /** the role of a user a first single sign-on creates (SSO_DEFAULT_ROLE) */
  ssoDefaultRole: Role;
  localAuthEnabled: boolean;
  /** the sign-in limiter's thresholds (src/auth/login-limiter.ts) */
  loginLimits: LoginLimits;
  /** Express's `trust proxy`: the proxies whose X-Forwarded-* headers are believed, or a hop count */
  trustProxy: number | string[];
  /** scrypt's cost, log2 N (17 = OWASP's N=2^17; lower only under NODE_ENV=test) */
  passwordHashCost: number;
  /** shared secret of the inbound deployment webhooks; absent: they answer 503 */
  webhookSecret?: string;
  /** where pg_dump/pg_restore live; absent: found on PATH */
  pgBinDir?: string;
  /** the SMTP server emails go through; absent: emails are held in the outbox, none is sent */
  smtpUrl?: string;
  /** the From of every email (default: the service's name at PUBLIC_URL's host) */
  mailFrom: string;
  /** the outbox's first retry delay; each next one doubles (with jitter) for up to 24 hours */
  outboxRetryBaseMs: number;
  /** host names, addresses and CIDR ranges an outbound webhook may reach although private (and over http) */
  outboundWebhooksAllowPrivate: string[];
};

export type DatabasePoolMode = 'session' | 'transaction';

/** Failed password sign-ins allowed before 429; see src/auth/login-limiter.ts. */
export type LoginLimits = {
  /** per account and client address together, in 15 minutes */
  perAccountAndAddress: number;
  /** per client address, whatever the accounts, in 15 minutes */
  perAddress: number;
  /** per account from all addresses in 24 hours; past it only addresses the account signed in from may try */
  perAccountDaily: number;
  /** the delay after 3 consecutive failures of an account, doubling with each further one (to 5 s) */
  delayBaseMs: number;
};

const LOGIN_DELAY_BASE_MS = 250;

export class ConfigError extends Error {}

/**
 * Reads `.env` in the directory (the working directory) into process.env when the file is there;
 * a variable already in the environment keeps its value. Node's own parser (process.loadEnvFile).
 */
export function loadEnvFile(dir: string = process.cwd()): boolean {
  const file = path.join(dir, '.env');
  if (!existsSync(file)) return false;
  process.loadEnvFile(file);
  return true;
}

/**
 * The start-up check of ADMIN_PASSWORD (server.ts, right after loadConfig, and again when the
 * admin is created): the same rule as any new password, so what starts is what can be created.
 */
export async function checkAdminPassword(config: Config): Promise<void> {
  if (!config.admin) return;
  const problem = await passwordProblem(config.admin.password, {
    email: config.admin.email,
    firstName: FIRST_ADMIN_NAME,
  });
  if (problem) throw new ConfigError(`Invalid configuration:\n  ADMIN_PASSWORD: ${problem}`);
}

/** The first name of the admin ADMIN_EMAIL creates. */
export const FIRST_ADMIN_NAME = 'Admin';

/** The only reader of process.env; tests pass their own env. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = EnvSchema.safeParse(cleaned);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const e = result.data;
  if ((e.ADMIN_EMAIL && !e.ADMIN_PASSWORD) || (!e.ADMIN_EMAIL && e.ADMIN_PASSWORD)) {
    throw new ConfigError('Invalid configuration:\n  ADMIN_EMAIL and ADMIN_PASSWORD must be set together');
  }
  if (!e.DATABASE_URL && (e.DATABASE_DIRECT_URL || e.DATABASE_POOL_MODE === 'transaction')) {
    throw new ConfigError(
      'Invalid configuration:\n  DATABASE_POOL_MODE=transaction and DATABASE_DIRECT_URL need DATABASE_URL (the embedded database has no pooler)',
    );
  }
  if (e.PASSWORD_HASH_COST !== undefined && e.PASSWORD_HASH_COST < PASSWORD_HASH_COST && e.NODE_ENV !== 'test') {
    throw new ConfigError(
      `Invalid configuration:\n  PASSWORD_HASH_COST: below ${PASSWORD_HASH_COST} only when NODE_ENV=test`,
    );
  }
  const passwordHashCost =
    e.PASSWORD_HASH_COST ?? (e.NODE_ENV === 'test' ? TEST_PASSWORD_HASH_COST : PASSWORD_HASH_COST);
  const publicUrl = e.PUBLIC_URL.replace(/\/+$/, '');
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    databasePoolMode: e.DATABASE_POOL_MODE,
    databaseDirectUrl: e.DATABASE_DIRECT_URL,
    dataDir: path.resolve(e.DATA_DIR),
    embeddedPgPort: e.EMBEDDED_PG_PORT,
    sessionSecret: e.SESSION_SECRET,
    sessionIdleMs: e.SESSION_IDLE_MINUTES * 60_000,
    sessionMaxAgeMs: e.SESSION_MAX_HOURS * 3_600_000,
    logLevel: e.LOG_LEVEL,
    shutdownDrainMs: (e.SHUTDOWN_DRAIN_SECONDS ?? (e.NODE_ENV === 'production' ? 5 : 0)) * 1000,
    publicUrl,
    secureCookies: publicUrl.startsWith('https://'),
    admin:
      e.ADMIN_EMAIL && e.ADMIN_PASSWORD
        ? { email: e.ADMIN_EMAIL.toLowerCase(), password: e.ADMIN_PASSWORD }
        : undefined,
    oidc:
      e.OIDC_ISSUER_URL && e.OIDC_CLIENT_ID
        ? {
            issuerUrl: e.OIDC_ISSUER_URL.replace(/\/+$/, ''),
            clientId: e.OIDC_CLIENT_ID,
            clientSecret: e.OIDC_CLIENT_SECRET ?? '',
            providerName: e.OIDC_PROVIDER_NAME,
            scopes: e.OIDC_SCOPES.split(/[\s,]+/).filter(Boolean),
          }
        : undefined,
    oidcProviderName: e.OIDC_PROVIDER_NAME,
    ssoDefaultRole: e.SSO_DEFAULT_ROLE,
    localAuthEnabled: e.LOCAL_AUTH,
    loginLimits: {
      perAccountAndAddress: e.LOGIN_MAX_FAILURES,
      perAddress: e.LOGIN_MAX_FAILURES_PER_ADDRESS,
      perAccountDaily: e.LOGIN_MAX_FAILURES_PER_DAY,
      // the growing delay would make every test that fails a few sign-ins slow; a test sets it to see it
      delayBaseMs: e.LOGIN_DELAY_BASE_MS ?? (e.NODE_ENV === 'test' ? 0 : LOGIN_DELAY_BASE_MS),
    },
    trustProxy: e.TRUST_PROXY,
    passwordHashCost,
    webhookSecret: e.WEBHOOK_SECRET,
    pgBinDir: e.PG_BIN_DIR ? path.resolve(e.PG_BIN_DIR) : undefined,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM ?? `Stores <stores@${new URL(publicUrl).hostname}>`,
    outboxRetryBaseMs: e.OUTBOX_RETRY_BASE_MS,
    outboundWebhooksAllowPrivate: (e.OUTBOUND_WEBHOOKS_ALLOW_PRIVATE ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean),
  };
}
