// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';

export const ADDITIONAL: FormItem[] = [
  item('root_folder_path', 'string', { default: '/', required: true }),
  item('bucket', 'string', { required: true }),
  item('endpoint', 'string', { required: true }),
  item('region', 'string'),
  item('access_key_id', 'string', { required: true }),
  item('secret_access_key', 'string', { required: true }),
  item('session_token', 'string'),
  item('custom_host', 'string'),
  item('enable_custom_host_presign', 'bool', { help: 'Presign links for the custom host (off: unsigned links on it)' }),
  item('sign_url_expire', 'number', { default: '4' }),
  item('placeholder', 'string'),
  item('force_path_style', 'bool'),
  item('list_object_version', 'select', { options: 'v1,v2', default: 'v1' }),
  item('remove_bucket', 'bool', { help: 'Remove bucket name from path when using custom host.' }),
  item('add_filename_to_disposition', 'bool', { help: 'Add filename to Content-Disposition header.' }),
  item('enable_direct_upload', 'bool', { default: 'false', help: 'Browsers upload straight to the bucket with a presigned PUT (the bucket needs CORS for the site)' }),
  item('direct_upload_host', 'string', { help: 'Host (or scheme://host) of the presigned upload URLs instead of the endpoint' }),
  item('user_agent', 'string', { help: 'Custom User-Agent for S3 requests.' }),
];

export const CONFIG = driverConfig({ name: 'S3', localSort: true, checkStatus: true, defaultRoot: '/' });
