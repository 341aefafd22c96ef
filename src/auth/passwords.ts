import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * scrypt at OWASP's recommendation: N = 2^17, r = 8, p = 1 (128 MiB and about half a second a
 * hash). PASSWORD_HASH_COST (log2 N) may lower it only under NODE_ENV=test (config.ts).
 * A hash records its parameters, `scrypt$N$r$p$salt$key`, so older hashes still verify and
 * are rewritten at the current cost on the next successful sign-in (needsRehash).
 */
export const PASSWORD_HASH_COST = 17;
const R = 8;
const P = 1;
const KEY_LENGTH = 64;
// bounds on the parameters a stored hash may ask for, so a bad row cannot exhaust memory
const MAX_COST = 20;
const MAX_R = 16;
const MAX_P = 4;

type Params = { N: number; r: number; p: number };

// scrypt is memory-hard; node runs it on the libuv thread pool, off the event loop.
function derive(password: string, salt: Buffer, params: Params): Promise<Buffer> {
  // scrypt needs 128 * N * r * p bytes; twice that leaves node room for its own overhead
  const options: ScryptOptions = { ...params, maxmem: 2 * 128 * params.N * params.r * params.p };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

function parseHash(stored: string): { params: Params; salt: Buffer; key: Buffer } | undefined {
  const [scheme, n, r, p, salt, key, ...rest] = stored.split('$');
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  if (scheme !== 'scrypt' || !salt || !key || rest.length > 0) return undefined;
  const powerOfTwo =
    Number.isInteger(params.N) && params.N > 1 && (params.N & (params.N - 1)) === 0 && params.N <= 2 ** MAX_COST;
  if (
    !powerOfTwo ||
    !Number.isInteger(params.r) ||
    params.r < 1 ||
    params.r > MAX_R ||
    !Number.isInteger(params.p) ||
    params.p < 1 ||
    params.p > MAX_P
  ) {
    return undefined;
  }
  return { params, salt: Buffer.from(salt, 'base64'), key: Buffer.from(key, 'base64') };
}

/** cost is log2 N; the configured PASSWORD_HASH_COST (config.passwordHashCost), 17 unless in test. */
export async function hashPassword(password: string, cost: number = PASSWORD_HASH_COST): Promise<string> {
  const params = { N: 2 ** cost, r: R, p: P };
  const salt = randomBytes(16);
  const key = await derive(password, salt, params);
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const actual = await derive(password, parsed.salt, parsed.params);
  return actual.length === parsed.key.length && timingSafeEqual(actual, parsed.key);
}

/** Whether a stored hash was made with other parameters than the current cost's (then it is rewritten at sign-in). */
export function needsRehash(stored: string, cost: number = PASSWORD_HASH_COST): boolean {
  const parsed = parseHash(stored);
  return !parsed || parsed.params.N !== 2 ** cost || parsed.params.r !== R || parsed.params.p !== P;
}

/** Hashed once per cost so that an unknown email costs as much time as a wrong password. */
const decoyHashes = new Map<number, Promise<string>>();
export async function verifyAgainstDecoy(password: string, cost: number = PASSWORD_HASH_COST): Promise<false> {
  let decoy = decoyHashes.get(cost);
  if (!decoy) decoyHashes.set(cost, (decoy = hashPassword(randomBytes(16).toString('hex'), cost)));
  await verifyPassword(password, await decoy);
  return false;
}

export const generatePassword = () => randomBytes(12).toString('base64url');
