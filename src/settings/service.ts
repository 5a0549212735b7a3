import type { SettingsRepo } from '../db/settings.js';
import { FLAG, type SettingItem, builtinSettings } from './defaults.js';

/**
 * The settings store: all items are held in memory (a few hundred short strings) and read
 * synchronously by every layer; writes go to the database first, then to memory.
 */
export class Settings {
  private items = new Map<string, SettingItem>();
  /** Bumped on every change, for caches of values derived from settings. */
  version = 0;
  private readonly listeners: Array<(keys: string[]) => void> = [];

  constructor(private readonly repo: SettingsRepo) {}

  /**
   * Boot-time reconciliation (wire-api.md §11.2): built-in items are created or have their
   * metadata forced to the code's values; stored values are kept except `version` and old
   * defaults; stored keys the code no longer knows are flagged deprecated.
   */
  async reconcile(): Promise<void> {
    const stored = new Map((await this.repo.all()).map((i) => [i.key, i]));
    const builtin = builtinSettings();
    const known = new Set<string>();
    for (const [index, def] of builtin.entries()) {
      known.add(def.key);
      const want: SettingItem = {
        key: def.key,
        value: def.value,
        help: def.help ?? '',
        type: def.type,
        options: def.options ?? '',
        group: def.group,
        flag: def.flag,
        index,
      };
      const have = stored.get(def.key);
      if (!have) {
        await this.repo.insert(want);
        continue;
      }
      const keepValue = def.key !== 'version' && !(def.previousDefaults ?? []).includes(have.value);
      const next = { ...want, value: keepValue ? have.value : def.value };
      if (JSON.stringify(next) !== JSON.stringify(have)) await this.repo.update(next);
    }
    for (const item of stored.values()) {
      if (!known.has(item.key) && item.flag !== FLAG.DEPRECATED) {
        await this.repo.update({ ...item, flag: FLAG.DEPRECATED });
      }
    }
    await this.reload();
  }

  async reload(): Promise<void> {
    const all = await this.repo.all();
    this.items = new Map(all.sort((a, b) => a.index - b.index).map((i) => [i.key, i]));
    this.version++;
  }

  get(key: string): string {
    return this.items.get(key)?.value ?? '';
  }

  getBool(key: string): boolean {
    return this.get(key) === 'true';
  }

  getNumber(key: string, fallback = 0): number {
    const n = Number(this.get(key));
    return Number.isFinite(n) ? n : fallback;
  }

  item(key: string): SettingItem | undefined {
    return this.items.get(key);
  }

  list(): SettingItem[] {
    return [...this.items.values()];
  }

  /** `key → value` of the items every visitor may read (flags PUBLIC and READONLY). */
  publicValues(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const i of this.items.values()) {
      if (i.flag === FLAG.PUBLIC || i.flag === FLAG.READONLY) out[i.key] = i.value;
    }
    return out;
  }

  async set(key: string, value: string): Promise<void> {
    const item = this.items.get(key);
    if (!item) throw new Error(`setting ${key} does not exist`);
    await this.repo.setValue(key, value);
    this.items.set(key, { ...item, value });
    this.version++;
    this.notify([key]);
  }

  /** Called with the changed keys after every write (caches keyed on settings listen here). */
  onChange(listener: (keys: string[]) => void): void {
    this.listeners.push(listener);
  }

  private notify(keys: string[]): void {
    for (const l of this.listeners) l(keys);
  }
}
