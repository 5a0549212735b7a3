import type { SettingsRepo } from '../db/settings.js';
import { BadRequest, NotFound } from '../errors.js';
import { FLAG, type SettingDefault, type SettingItem, builtinSettings, newAdminToken } from './defaults.js';

/** Checks a value against its item's type and the few keys with a syntax of their own. */
function checkValue(item: SettingItem, value: string): void {
  const bad = (why: string) => new BadRequest(`setting [${item.key}] ${why}`);
  if (item.type === 'number' && (value.trim() === '' || !Number.isFinite(Number(value)))) throw bad(`must be a number, got "${value}"`);
  if (item.type === 'bool' && value !== 'true' && value !== 'false') throw bad(`must be true or false, got "${value}"`);
  if (item.key.endsWith('_task_threads_num') && !(Number.isInteger(Number(value)) && Number(value) >= 1)) throw bad(`must be a whole number of at least 1, got "${value}"`);
  if (item.type === 'select' && item.options !== '' && !item.options.split(',').includes(value)) {
    throw bad(`must be one of ${item.options}, got "${value}"`);
  }
  if (item.key === 'privacy_regs') {
    for (const line of value.split('\n').filter((l) => l.trim() !== '')) {
      try {
        new RegExp(line);
      } catch (err) {
        throw bad(`has an invalid regular expression ${line}: ${(err as Error).message}`);
      }
    }
  }
  if (item.key === 'filename_char_mapping' || item.key === 'iframe_previews' || item.key === 'external_previews') {
    try {
      const v = JSON.parse(value || '{}');
      if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
    } catch (err) {
      throw bad(`must be a JSON object: ${(err as Error).message}`);
    }
  }
}

/**
 * The settings store: all items are held in memory (a few hundred short strings) and read
 * synchronously by every layer; writes go to the database first, then to memory.
 */
export class Settings {
  private items = new Map<string, SettingItem>();
  /** Bumped on every change, for caches of values derived from settings. */
  version = 0;
  private readonly listeners: Array<(keys: string[], fromPeer: boolean) => void> = [];
  private readonly loadListeners: Array<() => void> = [];

  constructor(
    private readonly repo: SettingsRepo,
    /** The built-in items with this installation's defaults (task threads follow the config). */
    readonly builtin: () => SettingDefault[] = () => builtinSettings(),
  ) {}

  /**
   * Boot-time reconciliation (wire-api.md §11.2): built-in items are created or have their
   * metadata forced to the code's values; stored values are kept except `version` and old
   * defaults; stored keys the code no longer knows are flagged deprecated.
   */
  async reconcile(): Promise<void> {
    const stored = new Map((await this.repo.all()).map((i) => [i.key, i]));
    const builtin = this.builtin();
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
    for (const l of this.loadListeners) l();
  }

  /** Called after every (re)load of all items from the database: services applying settings start here. */
  onLoad(listener: () => void): void {
    this.loadListeners.push(listener);
  }

  /** Reloads what another process saved, and tells the listeners (with `fromPeer` true). */
  async reloadFromPeer(): Promise<void> {
    const before = new Map([...this.items].map(([k, i]) => [k, i.value]));
    await this.reload();
    const changed = [...this.items.keys()].filter((k) => before.get(k) !== this.items.get(k)!.value);
    this.notify(changed, true);
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

  /**
   * Saves several items at once (`/api/admin/setting/save`): every value is checked first, so a
   * bad one saves nothing. Read-only items cannot be changed; unknown keys are refused.
   */
  async saveMany(input: Array<{ key: string; value: string }>): Promise<void> {
    for (const { key, value } of input) {
      const item = this.items.get(key);
      if (!item) throw new NotFound(`setting [${key}] not found`);
      if (item.flag === FLAG.READONLY && value !== item.value) throw new BadRequest(`setting [${key}] is read-only`);
      checkValue(item, value);
    }
    for (const { key, value } of input) {
      const item = this.items.get(key)!;
      if (item.value === value) continue;
      await this.repo.setValue(key, value);
      this.items.set(key, { ...item, value });
    }
    this.version++;
    this.notify(input.map((i) => i.key));
  }

  /** Deletes a deprecated item (one the code no longer knows). */
  async deleteDeprecated(key: string): Promise<void> {
    const item = this.items.get(key);
    if (!item) throw new NotFound(`setting [${key}] not found`);
    if (item.flag !== FLAG.DEPRECATED) throw new BadRequest(`setting [${key}] is not deprecated`);
    await this.repo.delete(key);
    this.items.delete(key);
    this.version++;
    this.notify([key]);
  }

  /** A new permanent admin token; every sign made with the old one stops working. */
  async resetToken(): Promise<string> {
    const token = newAdminToken();
    await this.set('token', token);
    return token;
  }

  /** Called with the changed keys after every write (caches keyed on settings listen here). */
  onChange(listener: (keys: string[], fromPeer: boolean) => void): void {
    this.listeners.push(listener);
  }

  private notify(keys: string[], fromPeer = false): void {
    for (const l of this.listeners) l(keys, fromPeer);
  }
}
