import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/knex';
import type { Request } from 'express';
import { Forbidden, NotFound } from '../http/errors';
import type { Actor } from '../modules/audit/audit.actor';
import { auditAs } from '../modules/audit/audit.service';
import { transaction } from '../db/transaction';
import { joinActiveUserRow, userRowSelect } from '../modules/users/users.queries';
import type { UserRow } from '../modules/users/users.service';
import { sql, toRaw } from '../db/sql';
import type { ReferenceCounters } from '../db/references';

export type TokenRow = {
  id: number;
  user_id: string;
  name: string;
  created_at: Date;
  expires_at: Date;
  last_used_at: Date | null;
};

/** The row as stored: the token's hash beside what is answered (TOKEN_COLUMNS), never answered. */
type StoredTokenRow = TokenRow & { token_hash: string };

const TOKEN_COLUMNS = ['id', 'user_id', 'name', 'created_at', 'expires_at', 'last_used_at'] as const;

const TOKEN_PREFIX = 'sst_';
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
const LAST_USED_RESOLUTION_MS = 60_000;

/** A token just created: its row and its secret, which is never stored. */
export type CreatedTokenRecord = { row: TokenRow; token: string };

/** A token as the audit trail keeps it: never its secret. */
const audited = (row: TokenRow) => ({ name: row.name, expiresAt: row.expires_at, userId: row.user_id });

export function tokensService(db: Db) {
  return {
    /**
     * A token is made from a session, never from another token (403), so a leaked token cannot
     * outlive itself by minting successors.
     */
    assertMayCreate(authMethod: Request['authMethod']): void {
      if (authMethod === 'bearer')
        throw Forbidden('An API token cannot create API tokens; sign in and create it from your session');
    },

    /** Returns the secret once; only its hash is stored. Every token expires. */
    async create(userId: string, name: string, expiresInDays: number, actor: Actor): Promise<CreatedTokenRecord> {
      const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const [row] = await trx<StoredTokenRow>('api_tokens')
          .insert({
            user_id: userId,
            name,
            token_hash: hashToken(token),
            expires_at: trx.raw(`now() + make_interval(days => ?)`, [expiresInDays]),
          })
          .returning(TOKEN_COLUMNS);
        return {
          result: { row, token },
          audit: { entityType: 'api_token', entityId: row.id, action: 'create', after: audited(row) },
        };
      });
    },

    list(userId: string): Promise<TokenRow[]> {
      return db<TokenRow>('api_tokens').where({ user_id: userId }).orderBy('id', 'desc');
    },

    async revoke(userId: string, id: number, actor: Actor): Promise<void> {
      await transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const [row] = await trx<TokenRow>('api_tokens')
          .where({ id, user_id: userId })
          .delete()
          .returning(TOKEN_COLUMNS);
        if (!row) throw NotFound('Token not found');
        return {
          result: undefined,
          audit: { entityType: 'api_token', entityId: row.id, action: 'revoke', before: audited(row) },
        };
      });
    },

    /** The active user a live token belongs to, in one query; undefined for unknown, expired or inactive. */
    async authenticate(token: string): Promise<UserRow | undefined> {
      const {
        rows: [row],
      } = await toRaw<{ rows: (UserRow & { token_id: number; token_last_used_at: Date | null })[] }>(
        db,
        sql`SELECT ${userRowSelect}, t.id AS token_id, t.last_used_at AS token_last_used_at
              FROM api_tokens t ${joinActiveUserRow(sql.raw('t.user_id'))}
             WHERE t.token_hash = ${hashToken(token)} AND t.expires_at > now()
             LIMIT 1`,
      );
      if (!row) return undefined;
      const { token_id, token_last_used_at, ...user } = row;
      if (!token_last_used_at || Date.now() - token_last_used_at.getTime() > LAST_USED_RESOLUTION_MS) {
        // Recording use is bookkeeping; the request must not wait for it or fail with it.
        void db('api_tokens')
          .where({ id: token_id })
          .update({ last_used_at: db.fn.now() })
          .catch(() => undefined);
      }
      return user;
    },
  };
}

/** The rows of API tokens that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const apiTokenReferences: ReferenceCounters = {
  users: [
    {
      table: 'api_tokens',
      column: 'user_id',
      count: (id) => sql`SELECT count(*) FROM api_tokens WHERE user_id = ${id}`,
    },
  ],
};
