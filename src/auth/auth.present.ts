import type { Config } from '../config';
import type { CreatedToken, FailedSignInList, SsoStatus, Token } from './auth.schemas';
import type { FailedSignInRow } from './failed-sign-ins';
import type { CreatedTokenRecord, TokenRow } from './tokens.service';

export function presentToken(row: TokenRow): Token {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
  };
}

/** A new token: shown with its secret, this once. */
export function presentCreatedToken({ row, token }: CreatedTokenRecord): CreatedToken {
  const { lastUsedAt: _unused, ...created } = presentToken(row);
  return { ...created, token };
}

/** Which sign-in methods the configuration enables. */
export function presentSsoStatus(config: Pick<Config, 'oidc' | 'localAuthEnabled'>): SsoStatus {
  return {
    ssoEnabled: config.oidc !== undefined,
    ssoProvider: config.oidc ? config.oidc.providerName : null,
    localAuthEnabled: config.localAuthEnabled,
  };
}

/** An account's recent failed sign-ins, newest first. */
export function presentFailedSignIns(rows: FailedSignInRow[]): FailedSignInList {
  return {
    failedSignIns: rows.map((row) => ({
      at: row.occurred_at.toISOString(),
      ipAddress: row.ip_address,
      userAgent: row.user_agent,
      reason: row.reason,
    })),
  };
}
