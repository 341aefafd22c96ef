import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../db/knex';
import { sql, toRaw } from '../../db/sql';
import { joinActiveUserRow, userRowSelect } from '../users/users.queries';
import { BadRequest, NotFound } from '../../http/errors';
import { KNOWN_SETTINGS } from '../settings/settings.schemas';
import { settingsService } from '../settings/settings.service';
import type { Actor } from '../audit/audit.actor';
import { auditAs } from '../audit/audit.service';
import { transaction } from '../../db/transaction';
import type { UserRow } from '../users/users.service';
import { MCP_KEY_DEFAULT_DAYS, MCP_KEY_MAX_DAYS, type McpScope } from './mcp-keys.schemas';
import type { ReferenceCounters } from '../../db/references';

export type McpKeyRow = {
  id: number;
  name: string;
  scopes: McpScope[];
  created_by: string;
  created_at: Date;
  expires_at: Date;
  last_used_at: Date | null;
};

/** A key that opened a request, with the active account it acts for (its creator). */
export type McpKeyHolder = McpKeyRow & { creator: UserRow };

/** A key just created: its row and its secret, which is never stored. */
export type CreatedMcpKeyRecord = { row: McpKeyRow; key: string };

export const MCP_KEY_PREFIX = 'mcp_';
const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');
const LAST_USED_RESOLUTION_MS = 60_000;
/** The row as stored: the key's hash beside what is answered (COLUMNS), never answered. */
type StoredMcpKeyRow = McpKeyRow & { key_hash: string };

const COLUMNS = ['id', 'name', 'scopes', 'created_by', 'created_at', 'expires_at', 'last_used_at'] as const;

export function mcpKeysService(db: Db) {
  return {
    /** The longest lifetime a new key may have: the mcp.keyMaxLifetimeDays setting, else MCP_KEY_MAX_DAYS. */
    async maxLifetimeDays(): Promise<number> {
      const setting = KNOWN_SETTINGS['mcp.keyMaxLifetimeDays'].safeParse(
        await settingsService(db).get('mcp.keyMaxLifetimeDays'),
      );
      return setting.success ? setting.data.days : MCP_KEY_MAX_DAYS;
    },

    /** The key acts for the actor who creates it (an admin); every key expires (90 days unless asked, never beyond the longest allowed). */
    async create(
      actor: Actor,
      input: { name: string; scopes: McpScope[]; expiresInDays?: number },
    ): Promise<CreatedMcpKeyRecord> {
      if (!actor.userId) throw new Error('An MCP key needs a creating user');
      const createdBy = actor.userId;
      const maxDays = await this.maxLifetimeDays();
      if (input.expiresInDays !== undefined && input.expiresInDays > maxDays) {
        throw BadRequest('Validation failed', {
          errors: [{ field: 'expiresInDays', message: `must be at most ${maxDays} (setting mcp.keyMaxLifetimeDays)` }],
        });
      }
      const expiresInDays = input.expiresInDays ?? Math.min(MCP_KEY_DEFAULT_DAYS, maxDays);
      const key = MCP_KEY_PREFIX + randomBytes(32).toString('base64url');
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const [row] = await trx<StoredMcpKeyRow>('mcp_api_keys')
          .insert({
            name: input.name,
            scopes: input.scopes,
            key_hash: hashKey(key),
            created_by: createdBy,
            expires_at: trx.raw(`now() + make_interval(days => ?)`, [expiresInDays]),
          })
          .returning([...COLUMNS]);
        return {
          result: { row, key },
          audit: { entityType: 'mcp_key', entityId: row.id, action: 'create', after: row },
        };
      });
    },

    list(): Promise<McpKeyRow[]> {
      return db<McpKeyRow>('mcp_api_keys')
        .select([...COLUMNS])
        .orderBy('id', 'desc');
    },

    async revoke(id: number, actor: Actor): Promise<void> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const [deleted] = await trx<McpKeyRow>('mcp_api_keys')
          .where({ id })
          .delete()
          .returning([...COLUMNS]);
        if (!deleted) throw NotFound('MCP API key not found');
        return { result: undefined, audit: { entityType: 'mcp_key', entityId: id, action: 'revoke', before: deleted } };
      });
    },

    /** The live key and its creator's active account in one query; undefined for unknown, expired or orphaned keys. */
    async authenticate(key: string): Promise<McpKeyHolder | undefined> {
      const keyColumns = sql.join(
        COLUMNS.map((column) => sql`${sql.ident('k', column)} AS ${sql.ident(`key_${column}`)}`),
      );
      const {
        rows: [row],
      } = await toRaw<{ rows: Record<string, unknown>[] }>(
        db,
        sql`SELECT ${userRowSelect}, ${keyColumns}
              FROM mcp_api_keys k ${joinActiveUserRow(sql.raw('k.created_by'))}
             WHERE k.key_hash = ${hashKey(key)} AND k.expires_at > now()
             LIMIT 1`,
      );
      if (!row) return undefined;
      const holder = toHolder(row);
      if (!holder.last_used_at || Date.now() - holder.last_used_at.getTime() > LAST_USED_RESOLUTION_MS) {
        // Recording use is bookkeeping; the request must not wait for it or fail with it.
        void db('mcp_api_keys')
          .where({ id: holder.id })
          .update({ last_used_at: db.fn.now() })
          .catch(() => undefined);
      }
      return holder;
    },
  };
}

/** Splits the joined row: the key_ columns are the key, the rest its creator. */
function toHolder(row: Record<string, unknown>): McpKeyHolder {
  const key: Record<string, unknown> = {};
  const creator: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) {
    if (column.startsWith('key_')) key[column.slice(4)] = value;
    else creator[column] = value;
  }
  return { ...(key as McpKeyRow), creator: creator as UserRow };
}

/** The rows of MCP keys that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const mcpKeysReferences: ReferenceCounters = {
  users: [
    {
      table: 'mcp_api_keys',
      column: 'created_by',
      count: (id) => sql`SELECT count(*) FROM mcp_api_keys WHERE created_by = ${id}`,
    },
  ],
};
