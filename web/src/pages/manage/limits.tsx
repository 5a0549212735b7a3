// What the Groups and Users forms share (docs/access-and-security.md, groups, quotas, limits):
// the permission bits, a list of roots ({path, name}), the quota and limit fields with sizes
// typed as "10G", and the one-line summaries the lists show.
import { Index, Show } from 'solid-js';
import { formatSize } from '../../format';
import { type MessageKey, t } from '../../i18n';
import { notifyError } from '../../state';
import type { FieldSpec } from './Field';
import { recordDialog } from './recordDialog';

/** Labels of the permission bits, bit 0 first. */
export const PERMISSIONS: MessageKey[] = [
  'm.perm_see_hidden_files',
  'm.perm_access_without_password',
  'm.perm_add_offline_download',
  'm.perm_write_mkdir_upload',
  'm.perm_rename',
  'm.perm_move',
  'm.perm_copy',
  'm.perm_remove',
  'm.perm_webdav_read',
  'm.perm_webdav_manage',
  'm.perm_ftp_sftp_read',
  'm.perm_ftp_sftp_write',
  'm.perm_read_archives',
  'm.perm_decompress',
  'm.perm_share',
  'm.perm_custom_share_id',
];

export const hasBit = (bits: number, bit: number) => ((bits >> bit) & 1) === 1;
export const permNames = (bits: number) => PERMISSIONS.filter((_, i) => hasBit(bits, i)).map((k) => t(k));

/** The permission bits as checkboxes over the form value `permission` (a number as text). */
export function PermissionBits(props: { value: string; set: (v: string) => void; legend?: string }) {
  const bits = () => Number(props.value) || 0;
  return (
    <fieldset class="perms">
      <legend>{props.legend ?? t('m.permissions')}</legend>
      <div class="form-grid">
        <Index each={PERMISSIONS}>
          {(name, bit) => (
            <label>
              <input type="checkbox" name={`perm-${bit}`} checked={hasBit(bits(), bit)} onChange={(e) => props.set(String(e.currentTarget.checked ? bits() | (1 << bit) : bits() & ~(1 << bit)))} />{' '}
              {t(name())}
            </label>
          )}
        </Index>
      </div>
    </fieldset>
  );
}

export interface Root {
  path: string;
  name: string;
}

const parseRoots = (v: string): Root[] => {
  try {
    const r = JSON.parse(v || '[]') as Root[];
    return Array.isArray(r) ? r : [];
  } catch {
    return [];
  }
};

/** The roots of a user or a group, over the form value `roots` (JSON text): a folder and its name per row. */
export function RootsEditor(props: { value: string; set: (v: string) => void }) {
  const roots = () => parseRoots(props.value);
  const put = (list: Root[]) => props.set(JSON.stringify(list));
  const change = (i: number, key: keyof Root, v: string) => put(roots().map((r, j) => (j === i ? { ...r, [key]: v } : r)));
  return (
    <fieldset class="perms roots" data-testid="roots">
      <legend>{t('groups.roots')}</legend>
      <p class="help">{t('groups.roots_help')}</p>
      <Index each={roots()}>
        {(r, i) => (
          <div class="roots-row" data-testid="root-row">
            <label>
              {t('groups.root_path')}
              <input name={`root-path-${i}`} value={r().path} placeholder="/team" onInput={(e) => change(i, 'path', e.currentTarget.value)} />
            </label>
            <label>
              {t('groups.root_name')}
              <input name={`root-name-${i}`} value={r().name} placeholder="team" onInput={(e) => change(i, 'name', e.currentTarget.value)} />
            </label>
            <button type="button" class="small" aria-label={t('groups.remove_root', { name: r().name || r().path })} onClick={() => put(roots().filter((_, j) => j !== i))}>
              {t('groups.remove')}
            </button>
          </div>
        )}
      </Index>
      <button type="button" class="small" data-action="add-root" onClick={() => put([...roots(), { path: '', name: '' }])}>
        {t('groups.add_root')}
      </button>
    </fieldset>
  );
}

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** "10G", "512 KiB", "1.5m", "4096" → bytes; "" → 0; anything else → undefined. */
export function parseSize(s: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(s);
  if (s.trim() === '') return 0;
  if (!m) return undefined;
  return Math.round(Number(m[1]) * UNITS[m[2]!.toLowerCase()]!);
}

/** Bytes as the form shows them: in the largest unit that holds them exactly (10737418240 → "10G"). */
export function sizeText(n: number): string {
  for (const [letter, u] of [['T', 1024 ** 4], ['G', 1024 ** 3], ['M', 1024 ** 2], ['K', 1024]] as const) if (n > 0 && n % u === 0) return `${n / u}${letter}`;
  return String(n);
}

export interface LimitValues {
  quota_bytes: number;
  quota_files: number;
  upload_rate: number;
  download_rate: number;
  max_transfers: number;
  max_sessions: number;
}

const SIZES = ['quota_bytes', 'upload_rate', 'download_rate'] as const;
const COUNTS = ['quota_files', 'max_transfers', 'max_sessions'] as const;

/** The quota and limit fields of the forms, in their own fieldset. */
export const limitFields = (): FieldSpec[] => [
  { name: 'quota_bytes', type: 'string', group: 'limits', label: t('limits.quota_bytes'), help: t('limits.size_help') },
  { name: 'quota_files', type: 'number', group: 'limits', label: t('limits.quota_files') },
  { name: 'upload_rate', type: 'string', group: 'limits', label: t('limits.upload_rate'), help: t('limits.size_help') },
  { name: 'download_rate', type: 'string', group: 'limits', label: t('limits.download_rate'), help: t('limits.size_help') },
  { name: 'max_transfers', type: 'number', group: 'limits', label: t('limits.max_transfers') },
  { name: 'max_sessions', type: 'number', group: 'limits', label: t('limits.max_sessions') },
];

/** A record's quota and limits as form values. */
export function limitValues(r?: Partial<LimitValues>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of SIZES) out[k] = sizeText(r?.[k] ?? 0);
  for (const k of COUNTS) out[k] = String(r?.[k] ?? 0);
  return out;
}

/** The form values of the quota and limits as numbers, or the message saying which one is wrong. */
export function limitBody(v: Record<string, string>): LimitValues | string {
  const out: Partial<LimitValues> = {};
  for (const k of SIZES) {
    const n = parseSize(v[k] ?? '');
    if (n === undefined) return t('limits.bad_size', { field: t(`limits.${k}`), value: v[k] ?? '' });
    out[k] = n;
  }
  for (const k of COUNTS) {
    const n = Number((v[k] ?? '').trim() || 0);
    if (!Number.isInteger(n) || n < 0) return t('limits.bad_size', { field: t(`limits.${k}`), value: v[k] ?? '' });
    out[k] = n;
  }
  return out as LimitValues;
}

/** The form's roots: rows left empty are dropped; a half-filled one is the message. */
export function rootsBody(v: string): Root[] | string {
  const out: Root[] = [];
  for (const r of parseRoots(v)) {
    const path = r.path.trim();
    const name = r.name.trim();
    if (!path && !name) continue;
    if (!path || !name) return t('limits.bad_root');
    out.push({ path, name });
  }
  return out;
}

/**
 * recordDialog, asked again with what was typed while `toBody` answers a message (shown as an
 * error): resolves with the body to save, or undefined when cancelled.
 */
export async function validatedDialog(
  title: string,
  fields: FieldSpec[],
  initial: Record<string, string>,
  extra: Parameters<typeof recordDialog>[3],
  toBody: (v: Record<string, string>) => Record<string, unknown> | string,
): Promise<Record<string, unknown> | undefined> {
  let values = initial;
  for (;;) {
    const v = await recordDialog(title, fields, values, extra);
    if (!v) return undefined;
    const body = toBody(v);
    if (typeof body !== 'string') return body;
    notifyError(body);
    values = v;
  }
}

/** "10.0 GB, 1000 files", or "none". */
export function quotaSummary(q: Pick<LimitValues, 'quota_bytes' | 'quota_files'>): string {
  const parts = [q.quota_bytes > 0 ? formatSize(q.quota_bytes) : '', q.quota_files > 0 ? t('limits.files', { n: q.quota_files }) : ''].filter(Boolean);
  return parts.length ? parts.join(', ') : t('limits.none');
}

/** "up 1.00 MB/s, 3 transfers", or "none". */
export function limitsSummary(l: Pick<LimitValues, 'upload_rate' | 'download_rate' | 'max_transfers' | 'max_sessions'>): string {
  const parts = [
    l.upload_rate > 0 ? t('limits.up', { rate: `${formatSize(l.upload_rate)}/s` }) : '',
    l.download_rate > 0 ? t('limits.down', { rate: `${formatSize(l.download_rate)}/s` }) : '',
    l.max_transfers > 0 ? t('limits.transfers', { n: l.max_transfers }) : '',
    l.max_sessions > 0 ? t('limits.sessions', { n: l.max_sessions }) : '',
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : t('limits.none');
}

/** The number of bits set, "5 of 16". */
export const permCount = (bits: number) => t('limits.perm_count', { n: permNames(bits).length, total: PERMISSIONS.length });

/** A read-only list of permission names (or "none"). */
export function PermList(props: { bits: number }) {
  return (
    <Show when={permNames(props.bits).length > 0} fallback={<span class="muted">{t('limits.none')}</span>}>
      <span>{permNames(props.bits).join(', ')}</span>
    </Show>
  );
}
