// Online offices over WOPI (docs/office-and-thumbnails.md): which documents open in one, from the
// public settings wopi_enabled and wopi_services. A service that lists its extensions opens
// those; one that lists none opens what its discovery does, which the page can not read, so the
// office documents every online office opens stand for it.
import { extOf } from './format';
import { settings } from './state';

export const OFFICE_EXTS = ['docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp', 'doc', 'xls', 'ppt', 'rtf', 'csv'];

interface Service {
  name: string;
  extensions: string[];
}

/** wopi_services as the server reads it (src/wopi/host.ts parseServices); a broken value offers none. */
export function officeServices(text = settings().wopi_services ?? '[]'): Service[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text || '[]');
  } catch {
    return [];
  }
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((s: { name?: unknown; extensions?: unknown }) => {
    if (!s || typeof s.name !== 'string') return [];
    const list = typeof s.extensions === 'string' ? s.extensions.split(',') : Array.isArray(s.extensions) ? s.extensions.map(String) : [];
    return [{ name: s.name, extensions: list.map((e) => e.trim().replace(/^\./, '').toLowerCase()).filter(Boolean) }];
  });
}

/** The services that open `name` (none while wopi_enabled is off), in the settings' order. */
export function officeServicesFor(name: string): string[] {
  if (settings().wopi_enabled !== 'true') return [];
  const ext = extOf(name);
  if (!ext) return [];
  return officeServices()
    .filter((s) => (s.extensions.length ? s.extensions.includes(ext) : OFFICE_EXTS.includes(ext)))
    .map((s) => s.name);
}
