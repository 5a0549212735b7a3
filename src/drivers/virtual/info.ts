// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';

export const ADDITIONAL: FormItem[] = [
  item('root_folder_path', 'string'),
  item('num_file', 'number', { default: '30', required: true }),
  item('num_folder', 'number', { default: '30', required: true }),
  item('max_file_size', 'number', { default: '1073741824', required: true }),
  item('min_file_size', 'number', { default: '1048576', required: true }),
];

export const CONFIG = driverConfig({ name: 'Virtual', localSort: true, onlyLocal: true, needMs: true, noUpload: true });
