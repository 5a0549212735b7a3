// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';

// OpenList's items, in its order (drivers/chunk/meta.go).
export const ADDITIONAL: FormItem[] = [
  item('remote_path', 'string', { required: true }),
  item('part_size', 'number', { required: true, help: 'bytes' }),
  item('chunk_large_file_only', 'bool', { default: 'false', help: 'chunk only if file size > part_size' }),
  item('chunk_prefix', 'string', { default: '[openlist_chunk]', help: 'the prefix of chunk folder' }),
  item('custom_ext', 'string'),
  item('store_hash', 'bool', { default: 'true' }),
  item('num_list_workers', 'number', { default: '5', required: true }),
  item('thumbnail', 'bool', { default: 'false', required: true, help: 'enable thumbnail which pre-generated under .thumbnails folder' }),
  item('show_hidden', 'bool', { default: 'true', help: 'show hidden directories and files' }),
];

export const CONFIG = driverConfig({ name: 'Chunk', localSort: true, onlyProxy: true, noCache: true, defaultRoot: '/' });
