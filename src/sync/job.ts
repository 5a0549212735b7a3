import { BadRequest } from '../errors.js';
import { COMPARE_MODES, type CompareMode, DEFAULT_TOLERANCE_MS } from '../fs/compare.js';
import { cleanPath, isSubPath } from '../util/paths.js';
import { checkTimeZone, parseCron } from './cron.js';
import { FilterSet, NO_FILTERS, parseAge, parseSize, type SyncFilters } from './filters.js';

export const SYNC_MODES = ['copy', 'sync', 'move', 'bisync'] as const;
export type SyncMode = (typeof SYNC_MODES)[number];
export const DELETE_PHASES = ['before', 'after'] as const;
/** bisync: a file changed on both sides since the last run. */
export const CONFLICT_RULES = ['newer', 'keep_both', 'src_wins'] as const;
export type ConflictRule = (typeof CONFLICT_RULES)[number];

export interface SyncOptions {
  /** KiB/s for this job's reads (0: none; the server's own limits apply too). */
  bandwidth_limit: number;
  /** Files transferred at once. */
  transfers: number;
  /** sync: delete extras before copying (frees space) or after (nothing is gone before its replacement arrived). */
  delete_phase: (typeof DELETE_PHASES)[number];
  /** A run that would delete more stops before changing anything (-1: no limit). */
  max_deletes: number;
  /** Every run only plans (a report of what would be done). */
  dry_run: boolean;
  conflict: ConflictRule;
  /** Modification times this close count as equal (ms). */
  modify_window: number;
  /** Reports kept per job. */
  keep_reports: number;
}

export const DEFAULT_OPTIONS: SyncOptions = { bandwidth_limit: 0, transfers: 4, delete_phase: 'after', max_deletes: -1, dry_run: false, conflict: 'newer', modify_window: DEFAULT_TOLERANCE_MS, keep_reports: 20 };

export interface SyncSchedule {
  /** 5-field cron; '' for none (runs are started by hand). */
  cron: string;
  time_zone: string;
}

/** A job as the service holds it. */
export interface SyncJob {
  id: number;
  name: string;
  src: string;
  dst: string;
  mode: SyncMode;
  compare: CompareMode;
  filters: SyncFilters;
  schedule: SyncSchedule;
  options: SyncOptions;
  disabled: boolean;
  ownerId: number;
  owner: string;
  nextRun: number;
  createdAt: number;
  updatedAt: number;
}

/** A job as a client sends it (sizes and ages may be rclone's `10M`, `7d`). */
export interface SyncJobBody {
  name: string;
  src: string;
  dst: string;
  mode?: string;
  compare?: string;
  filters?: Partial<Record<keyof SyncFilters, unknown>>;
  schedule?: { cron?: string; time_zone?: string } | null;
  options?: Partial<Record<keyof SyncOptions, unknown>>;
  disabled?: boolean;
}

const oneOf = <T extends string>(list: readonly T[], v: unknown, field: string, dflt: T): T => {
  if (v === undefined || v === null || v === '') return dflt;
  if (typeof v === 'string' && (list as readonly string[]).includes(v)) return v as T;
  throw new BadRequest(`${field} must be one of ${list.join(', ')}`);
};

const intIn = (v: unknown, field: string, min: number, max: number, dflt: number): number => {
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new BadRequest(`${field} must be a whole number from ${min} to ${max}`);
  return v;
};

const globs = (v: unknown, field: string): string[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.length > 100 || v.some((g) => typeof g !== 'string')) throw new BadRequest(`${field} must be a list of at most 100 patterns`);
  return v as string[];
};

const sizeOrAge = (v: unknown): number | string | null => (typeof v === 'number' || typeof v === 'string' ? v : null);

export function normalizeFilters(f: SyncJobBody['filters']): SyncFilters {
  if (!f) return { ...NO_FILTERS };
  const out: SyncFilters = {
    include: globs(f.include, 'filters.include'),
    exclude: globs(f.exclude, 'filters.exclude'),
    min_size: parseSize(sizeOrAge(f.min_size), 'filters.min_size'),
    max_size: parseSize(sizeOrAge(f.max_size), 'filters.max_size'),
    min_age: parseAge(sizeOrAge(f.min_age), 'filters.min_age'),
    max_age: parseAge(sizeOrAge(f.max_age), 'filters.max_age'),
  };
  new FilterSet(out); // every pattern compiles
  return out;
}

export function normalizeOptions(o: SyncJobBody['options']): SyncOptions {
  const v = o ?? {};
  if (v.dry_run !== undefined && typeof v.dry_run !== 'boolean') throw new BadRequest('options.dry_run must be true or false');
  return {
    bandwidth_limit: intIn(v.bandwidth_limit, 'options.bandwidth_limit', 0, 10_000_000, DEFAULT_OPTIONS.bandwidth_limit),
    transfers: intIn(v.transfers, 'options.transfers', 1, 32, DEFAULT_OPTIONS.transfers),
    delete_phase: oneOf(DELETE_PHASES, v.delete_phase, 'options.delete_phase', DEFAULT_OPTIONS.delete_phase),
    max_deletes: intIn(v.max_deletes, 'options.max_deletes', -1, 100_000_000, DEFAULT_OPTIONS.max_deletes),
    dry_run: (v.dry_run as boolean | undefined) ?? false,
    conflict: oneOf(CONFLICT_RULES, v.conflict, 'options.conflict', DEFAULT_OPTIONS.conflict),
    modify_window: intIn(v.modify_window, 'options.modify_window', 0, 86_400_000, DEFAULT_OPTIONS.modify_window),
    keep_reports: intIn(v.keep_reports, 'options.keep_reports', 1, 1000, DEFAULT_OPTIONS.keep_reports),
  };
}

const absPath = (p: unknown, field: string): string => {
  if (typeof p !== 'string' || !p.startsWith('/') || p.length > 4096 || p.includes('\0')) throw new BadRequest(`${field} must be an absolute path`);
  return cleanPath(p);
};

/** A client's job checked and with its defaults: what the repository stores. */
export function normalizeJob(body: SyncJobBody): Omit<SyncJob, 'id' | 'ownerId' | 'owner' | 'nextRun' | 'createdAt' | 'updatedAt'> {
  const name = typeof body.name === 'string' ? body.name.trim() : '';
  if (name.length === 0 || name.length > 100 || /[\u0000-\u001f/]/.test(name)) throw new BadRequest('name is 1 to 100 characters, no / or control characters');
  const src = absPath(body.src, 'src');
  const dst = absPath(body.dst, 'dst');
  if (isSubPath(src, dst) || isSubPath(dst, src)) throw new BadRequest('src and dst must not lie inside one another');
  const cron = (body.schedule?.cron ?? '').trim();
  if (cron) parseCron(cron);
  const timeZone = checkTimeZone(body.schedule?.time_zone || 'UTC');
  return {
    name,
    src,
    dst,
    mode: oneOf(SYNC_MODES, body.mode, 'mode', 'copy'),
    compare: oneOf(COMPARE_MODES, body.compare, 'compare', 'mtime'),
    filters: normalizeFilters(body.filters),
    schedule: { cron, time_zone: timeZone },
    options: normalizeOptions(body.options),
    disabled: body.disabled ?? false,
  };
}
