// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';

export const MEDIA_TYPES = 'mp4,mkv,flv,avi,wmv,ts,rmvb,webm,mp3,flac,aac,wav,ogg,m4a,wma,alac';
export const PASS_TYPES = 'ass,srt,vtt,sub,strm';

// OpenList's items, in its order (drivers/strm/meta.go).
export const ADDITIONAL: FormItem[] = [
  item('paths', 'text', { required: true }),
  item('siteUrl', 'text', { help: 'The prefix URL of the strm file' }),
  item('PathPrefix', 'text', { default: '/d', help: 'Path prefix' }),
  item('downloadFileTypes', 'text', { default: PASS_TYPES, help: 'Files need to download with strm (usally subtitles)' }),
  item('filterFileTypes', 'text', { default: MEDIA_TYPES, help: 'Supports suffix name of strm file' }),
  item('encodePath', 'bool', { default: 'true', required: true, help: 'encode the path in the strm file' }),
  item('withoutUrl', 'bool', { default: 'false', help: 'strm file content without URL prefix' }),
  item('withSign', 'bool', { default: 'false' }),
  item('SaveStrmToLocal', 'bool', { default: 'false', help: 'save strm file locally' }),
  item('SaveStrmLocalPath', 'text', { help: 'save strm file local path' }),
  item('SaveLocalMode', 'select', { options: 'insert,update,sync', default: 'insert', help: 'save strm file locally mode' }),
  // OpenList #2911: media files under this size (MB) get no .strm (samples, trailers, theme songs)
  item('minFileSize', 'number', { default: '0', help: 'Media files smaller than this (MB) get no .strm file; 0 keeps all' }),
];

export const CONFIG = driverConfig({ name: 'Strm', localSort: true, onlyProxy: true, noCache: true, noUpload: true, defaultRoot: '/' });
