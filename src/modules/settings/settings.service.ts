import type { Db } from '../../db/knex';
import type { Actor } from '../audit/audit.actor';
import { auditAs } from '../audit/audit.service';
import { transaction } from '../../db/transaction';
import type { ReferenceCounters } from '../../db/references';
import { sql } from '../../db/sql';

export type SettingRow = { key: string; value: Record<string, unknown>; updated_by: string | null; updated_at: Date };

/** System settings: one JSON object per key. */
export function settingsService(db: Db) {
  return {
    list(): Promise<SettingRow[]> {
      return db<SettingRow>('settings').orderBy('key');
    },

    async get(key: string): Promise<Record<string, unknown> | undefined> {
      return (await db<SettingRow>('settings').where({ key }).first())?.value;
    },

    /** The values of those keys that are set, in one query. */
    async getMany(keys: string[]): Promise<Map<string, Record<string, unknown>>> {
      const rows = await db<SettingRow>('settings').whereIn('key', keys).select('key', 'value');
      return new Map(rows.map((row) => [row.key, row.value]));
    },

    async put(key: string, value: Record<string, unknown>, actor: Actor): Promise<SettingRow> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const before = await trx<SettingRow>('settings').where({ key }).forUpdate().first();
        const [row] = await trx<SettingRow>('settings')
          .insert({ key, value, updated_by: actor.userId })
          .onConflict('key')
          .merge({ value, updated_by: actor.userId, updated_at: trx.fn.now() })
          .returning('*');
        return {
          result: row,
          audit: {
            entityType: 'setting',
            entityId: key,
            action: 'update',
            before: before ? { value: before.value } : null,
            after: { value: row.value },
          },
        };
      });
    },
  };
}

/** The rows of settings that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const settingsReferences: ReferenceCounters = {
  users: [
    {
      table: 'settings',
      column: 'updated_by',
      count: (id) => sql`SELECT count(*) FROM settings WHERE updated_by = ${id}`,
    },
  ],
};
