import type { Db } from '../../db/knex';

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

    async put(key: string, value: Record<string, unknown>, actorId: string): Promise<SettingRow> {
      const [row] = await db<SettingRow>('settings')
        .insert({ key, value: JSON.stringify(value) as never, updated_by: actorId })
        .onConflict('key')
        .merge({ value: JSON.stringify(value) as never, updated_by: actorId, updated_at: db.fn.now() as never })
        .returning('*');
      return row;
    },
  };
}
