import type { SettingItem } from '../settings/defaults.js';
import type { DbHandle } from './index.js';

export class SettingsRepo {
  constructor(private readonly h: DbHandle) {}

  async all(): Promise<SettingItem[]> {
    const rows = await this.h.db.selectFrom('setting_items').selectAll().execute();
    return rows.map((r) => ({
      key: r.key,
      value: r.value,
      help: r.help,
      type: r.type as SettingItem['type'],
      options: r.options,
      group: Number(r.group),
      flag: Number(r.flag),
      index: Number(r.index),
    }));
  }

  async insert(item: SettingItem): Promise<void> {
    await this.h.db.insertInto('setting_items').values(item).execute();
  }

  async update(item: SettingItem): Promise<void> {
    const { key, ...rest } = item;
    await this.h.db.updateTable('setting_items').set(rest).where('key', '=', key).execute();
  }

  async setValue(key: string, value: string): Promise<void> {
    await this.h.db.updateTable('setting_items').set({ value }).where('key', '=', key).execute();
  }

  async delete(key: string): Promise<void> {
    await this.h.db.deleteFrom('setting_items').where('key', '=', key).execute();
  }
}
