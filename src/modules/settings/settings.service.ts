import type { Db } from '../../db/knex';

type SettingRow = { key: string; value: Record<string, unknown>; updated_by: string | null; updated_at: Date };

export function presentSetting(row: SettingRow) {
  return { key: row.key, value: row.value, updatedAt: row.updated_at.toISOString(), updatedBy: row.updated_by };
}

/** System settings: one JSON object per key. */
export function settingsService(db: Db) {
  return {
    async list() {
      return (await db<SettingRow>('settings').orderBy('key')).map(presentSetting);
    },

    async get(key: string): Promise<Record<string, unknown> | undefined> {
      return (await db<SettingRow>('settings').where({ key }).first())?.value;
    },

    async put(key: string, value: Record<string, unknown>, actorId: string) {
      const [row] = await db<SettingRow>('settings')
        .insert({ key, value: JSON.stringify(value) as never, updated_by: actorId })
        .onConflict('key')
        .merge({ value: JSON.stringify(value) as never, updated_by: actorId, updated_at: db.fn.now() as never })
        .returning('*');
      return presentSetting(row);
    },
  };
}
