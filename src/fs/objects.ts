import type { Obj } from '../drivers/types.js';
import type { Settings } from '../settings/service.js';

export const TYPE = { UNKNOWN: 0, FOLDER: 1, VIDEO: 2, AUDIO: 3, TEXT: 4, IMAGE: 5 } as const;

/** Type codes from the extension lists in settings (audio, video, image, text, in that order). */
export class FileTypes {
  private source = '';
  /** The settings' version `lists` was checked at: listings ask once per entry. */
  private version = -1;
  private lists: Array<[Set<string>, number]> = [];

  constructor(private readonly settings: Settings) {}

  private refresh(): void {
    if (this.version === this.settings.version) return;
    this.version = this.settings.version;
    const keys = ['audio_types', 'video_types', 'image_types', 'text_types'] as const;
    const source = keys.map((k) => this.settings.get(k)).join('|');
    if (source === this.source) return;
    this.source = source;
    const codes = [TYPE.AUDIO, TYPE.VIDEO, TYPE.IMAGE, TYPE.TEXT];
    this.lists = keys.map((k, i) => [new Set(this.settings.get(k).split(',')), codes[i]!]);
  }

  /** From the name only (what /api/fs/get reports even for folders). */
  ofName(name: string): number {
    this.refresh();
    const dot = name.lastIndexOf('.');
    if (dot === -1) return TYPE.UNKNOWN;
    const ext = name.slice(dot + 1).toLowerCase();
    for (const [set, code] of this.lists) if (set.has(ext)) return code;
    return TYPE.UNKNOWN;
  }

  of(obj: Obj): number {
    return obj.isDir ? TYPE.FOLDER : this.ofName(obj.name);
  }
}

/** The `filename_char_mapping` setting: substring replacements applied to displayed names. */
export class NameMapping {
  private source = '';
  private pairs: Array<[string, string]> = [];

  constructor(private readonly settings: Settings) {}

  apply(name: string): string {
    const src = this.settings.get('filename_char_mapping');
    if (src !== this.source) {
      this.source = src;
      try {
        const parsed = JSON.parse(src || '{}') as Record<string, unknown>;
        this.pairs = Object.entries(parsed).filter((p): p is [string, string] => typeof p[1] === 'string' && p[0] !== '');
      } catch {
        this.pairs = [];
      }
    }
    let out = name;
    for (const [from, to] of this.pairs) if (out.includes(from)) out = out.split(from).join(to);
    return out;
  }
}

export const isoTime = (d: Date | number): string => new Date(d).toISOString();
