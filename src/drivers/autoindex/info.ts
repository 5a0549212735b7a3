// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';

// OpenList's items, in its order (drivers/autoindex/meta.go).
export const ADDITIONAL: FormItem[] = [
  item('url', 'string', { required: true }),
  item('item_xpath', 'string', { required: true }),
  item('name_xpath', 'string', { required: true }),
  item('modified_xpath', 'string'),
  item('size_xpath', 'string'),
  item('ignore_file_names', 'text', { default: '.\n..\nParent Directory\nUp' }),
  item('modified_time_format', 'string', { default: '02-Jan-2006 15:04', help: 'Must be based on the time point Mon Jan 2 15:04:05 -0700 MST 2006' }),
];

export const CONFIG = driverConfig({ name: 'AutoIndex', localSort: true, checkStatus: true, noUpload: true });
