// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';

/** The values of OpenList's conflict policies (what each does: ./policies.ts). */
export const READ_POLICIES = ['first', 'random', 'all'] as const;
export const WRITE_POLICIES = ['disabled', 'first', 'deterministic', 'deterministic_or_all', 'all', 'all_strict'] as const;
export const PUT_POLICIES = [...WRITE_POLICIES, 'random', 'quota', 'quota_strict'] as const;

export const ADDITIONAL: FormItem[] = [
  item('paths', 'text', { required: true }),
  item('protect_same_name', 'bool', { default: 'true', required: false, help: 'Protects same-name files from Delete or Rename' }),
  item('read_conflict_policy', 'select', { options: READ_POLICIES.join(','), default: 'first' }),
  item('write_conflict_policy', 'select', {
    options: WRITE_POLICIES.join(','),
    default: 'disabled',
    help: 'How the driver handles identical backend paths when renaming, removing, or making directories.',
  }),
  item('put_conflict_policy', 'select', {
    options: PUT_POLICIES.join(','),
    default: 'disabled',
    help: 'How the driver handles identical backend paths when uploading, copying, moving, or decompressing.',
  }),
  item('file_consistency_check', 'bool', { default: 'false' }),
];

/**
 * The form as a storage's addition is read: a write or put policy it does not set stays unset
 * (''), so that protect_same_name decides it (an AList v3 client saves only paths and
 * protect_same_name), rather than the form's default `disabled`.
 */
export const READ_ITEMS: FormItem[] = ADDITIONAL.map((it) => (it.name === 'write_conflict_policy' || it.name === 'put_conflict_policy' ? { ...it, default: '' } : it));

export const CONFIG = driverConfig({ name: 'Alias', localSort: true, noCache: true, proxyRangeOption: true, defaultRoot: '/' });
