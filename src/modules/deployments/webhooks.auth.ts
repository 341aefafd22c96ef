import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Compares digests of equal length, so neither the time taken nor a length mismatch tells anything about the secret. */
export function secretMatches(given: string, secret: string): boolean {
  return timingSafeEqual(sha256(given), sha256(secret));
}

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

/** GitHub's X-Hub-Signature-256: the HMAC-SHA256 of the body bytes exactly as received, keyed with the secret. */
export function githubSignatureMatches(rawBody: Buffer, header: string, secret: string): boolean {
  const given = SIGNATURE.exec(header.trim());
  if (!given) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(given[1], 'hex'));
}
