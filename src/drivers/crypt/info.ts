// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';

export const ADDITIONAL: FormItem[] = [
  item('filename_encryption', 'select', { options: 'off,standard,obfuscate', default: 'off', required: true }),
  item('directory_name_encryption', 'select', { options: 'false,true', default: 'false', required: true }),
  item('remote_path', 'string', { required: true, help: 'This is where the encrypted data stores' }),
  item('password', 'string', { required: true, help: 'the main password' }),
  item('salt', 'string', { help: "If you don't know what is salt, treat it as a second password. Optional but recommended" }),
  item('encrypted_suffix', 'string', { default: '.bin', required: true, help: 'for advanced user only! encrypted files will have this suffix' }),
  item('filename_encoding', 'select', { options: 'base64,base32,base32768', default: 'base64', required: true, help: 'for advanced user only!' }),
  item('thumbnail', 'bool', { default: 'false', required: true, help: 'enable thumbnail which pre-generated under .thumbnails folder' }),
  item('show_hidden', 'bool', { default: 'true', required: false, help: 'show hidden directories and files' }),
];

export const CONFIG = driverConfig({ name: 'Crypt', localSort: true, onlyProxy: true, noCache: true, defaultRoot: '/' });
