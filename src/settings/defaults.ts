import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { TaskKind } from '../tasks/kinds.js';
import { randomAlnum } from '../util/random.js';
import { VERSION } from '../version.js';

export const GROUP = {
  SINGLE: 0,
  SITE: 1,
  STYLE: 2,
  PREVIEW: 3,
  GLOBAL: 4,
  OFFLINE_DOWNLOAD: 5,
  INDEX: 6,
  SSO: 7,
  LDAP: 8,
  S3: 9,
  FTP: 10,
  TRAFFIC: 11,
} as const;

export const FLAG = { PUBLIC: 0, PRIVATE: 1, READONLY: 2, DEPRECATED: 3 } as const;

export type SettingType = 'string' | 'text' | 'number' | 'bool' | 'select';

export interface SettingItem {
  key: string;
  value: string;
  help: string;
  type: SettingType;
  options: string;
  group: number;
  flag: number;
  index: number;
}

export interface SettingDefault extends Omit<SettingItem, 'index' | 'help' | 'options'> {
  help?: string;
  options?: string;
  /** Stored values equal to one of these are old defaults and are replaced by `value` on boot. */
  previousDefaults?: string[];
  /** The default as docs/settings.md shows it, for a value that depends on the machine. */
  docDefault?: string;
}

export const LOGO = '/images/logo.svg';

/** OpenList's template of the text the web UI copies with a share link. */
const SHARE_SUMMARY =
  '@{{creator}} shared {{#each files}}{{#if @first}}"{{filename this}}"{{/if}}{{#if @last}}{{#unless (eq @index 0)}} and {{@index}} more files{{/unless}}{{/if}}{{/each}} from {{site_title}}: {{base_url}}/@s/{{id}}{{#if pwd}} , the share code is {{pwd}}{{/if}}{{#if expires}}, please access before {{dateLocaleString expires}}.{{/if}}';

export function newAdminToken(): string {
  return `alist-${randomUUID()}${randomAlnum(64)}`;
}

const IPV4 = String.raw`(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`;
const IPV6 = String.raw`(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}|(?:[0-9a-fA-F]{1,4}:){1,7}:|(?:[0-9a-fA-F]{1,4}:){1,6}:[0-9a-fA-F]{1,4}|::(?:[0-9a-fA-F]{1,4}:){0,5}[0-9a-fA-F]{1,4}`;

const IFRAME_PREVIEWS = JSON.stringify(
  {
    'doc,docx,xls,xlsx,ppt,pptx': {
      Microsoft: 'https://view.officeapps.live.com/op/view.aspx?src=$e_url',
      Google: 'https://docs.google.com/gview?url=$e_url&embedded=true',
    },
    pdf: { 'PDF.js': 'https://alist-org.github.io/pdf.js/web/viewer.html?file=$e_url' },
    epub: { 'EPUB.js': 'https://alist-org.github.io/static/epub.js/viewer.html?url=$e_url' },
  },
  null,
  2,
);

const { SINGLE, SITE, STYLE, PREVIEW, GLOBAL, OFFLINE_DOWNLOAD, INDEX, SSO, LDAP, S3, TRAFFIC } = GROUP;

/**
 * OpenList's per-kind task thread settings (group traffic), one for each task kind
 * (tasks/kinds.ts): the number of tasks of that kind run at once. Their defaults are the
 * config's `tasks.<section>.workers`. OpenList calls the two archive task kinds' threads
 * "decompress download" (expanding the archive) and "decompress upload" (storing what was
 * expanded).
 */
export const TASK_THREAD_SETTINGS = {
  offline_download: 'offline_download_task_threads_num',
  offline_download_transfer: 'offline_download_transfer_task_threads_num',
  upload: 'upload_task_threads_num',
  copy: 'copy_task_threads_num',
  move: 'move_task_threads_num',
  decompress: 'decompress_download_task_threads_num',
  decompress_upload: 'decompress_upload_task_threads_num',
  sync: 'sync_task_threads_num',
} as const satisfies Record<TaskKind, string>;

/** OpenList's speed limits in KiB/s (-1 = none): bytes to and from clients, to and from storages. */
export const SPEED_LIMIT_SETTINGS = ['max_client_download_speed', 'max_client_upload_speed', 'max_server_download_speed', 'max_server_upload_speed'] as const;
export type SpeedLimitKey = (typeof SPEED_LIMIT_SETTINGS)[number];

/** The thumbnail service's settings (thumbs/, docs/office-and-thumbnails.md). */
export const THUMB_SETTINGS = {
  enabled: 'thumb_enabled',
  prefetch: 'thumb_prefetch',
  sizes: 'thumb_sizes',
  workers: 'thumb_workers',
  maxSource: 'thumb_max_source_size',
  maxPixels: 'thumb_max_pixels',
  timeout: 'thumb_timeout',
  cacheSize: 'thumb_cache_size',
} as const;

export interface BuiltinOptions {
  /** Default thread count per task kind (the config's workers). */
  taskWorkers?: Partial<Record<TaskKind, number>>;
}
const { PUBLIC: P, PRIVATE: PR, READONLY: RO } = FLAG;

/**
 * The built-in settings in their listing order (wire-api.md §11.3, with the §11.4 additions
 * this server honours). `token` gets a fresh random value when first created.
 */
export function builtinSettings(opts: BuiltinOptions = {}): SettingDefault[] {
  const s = (key: string, value: string, type: SettingType, group: number, flag: number, extra: Partial<SettingDefault> = {}): SettingDefault => ({
    key,
    value,
    type,
    group,
    flag,
    ...extra,
  });
  return [
    // site
    s('version', VERSION.apiVersion, 'string', SITE, RO),
    s('site_title', 'Atrium', 'string', SITE, P),
    s('announcement', '### Atrium\nA file server speaking the AList v3 API.', 'text', SITE, P),
    s('pagination_type', 'all', 'select', SITE, P, { options: 'all,pagination,load_more,auto_load_more' }),
    s('default_page_size', '30', 'number', SITE, P),
    s('allow_indexed', 'false', 'bool', SITE, P),
    s('allow_mounted', 'true', 'bool', SITE, P),
    s('robots_txt', 'User-agent: *\nAllow: /', 'text', SITE, P),
    // style
    s('logo', LOGO, 'text', STYLE, P),
    s('favicon', LOGO, 'string', STYLE, P),
    s('main_color', '#1890ff', 'string', STYLE, P),
    s('home_icon', '🏠', 'string', STYLE, P),
    s('share_icon', '🎁', 'string', STYLE, P),
    s('home_container', 'max_980px', 'select', STYLE, P, { options: 'max_980px,hope_container' }),
    s('settings_layout', 'list', 'select', STYLE, P, { options: 'list,responsive' }),
    s('hide_storage_details', 'true', 'bool', STYLE, PR),
    s('hide_storage_details_in_manage_page', 'true', 'bool', STYLE, PR),
    s('show_disk_usage_in_plain_text', 'false', 'bool', STYLE, P),
    // preview
    s('text_types', 'txt,htm,html,xml,java,properties,sql,js,md,json,conf,ini,vue,php,py,bat,gitignore,yml,go,sh,c,cpp,h,hpp,tsx,vtt,srt,ass,rs,lrc,strm', 'text', PREVIEW, PR),
    s('audio_types', 'mp3,flac,ogg,m4a,wav,opus,wma', 'text', PREVIEW, PR),
    s('video_types', 'mp4,mkv,avi,mov,rmvb,webm,flv,m3u8', 'text', PREVIEW, PR),
    s('image_types', 'jpg,tiff,jpeg,png,gif,bmp,svg,ico,swf,webp,avif', 'text', PREVIEW, PR),
    s('proxy_types', 'm3u8', 'text', PREVIEW, PR),
    s('proxy_ignore_headers', 'authorization,referer', 'text', PREVIEW, PR),
    s('external_previews', '{}', 'text', PREVIEW, P),
    s('iframe_previews', IFRAME_PREVIEWS, 'text', PREVIEW, P),
    s('audio_cover', LOGO, 'string', PREVIEW, P),
    s('audio_autoplay', 'true', 'bool', PREVIEW, P),
    s('video_autoplay', 'true', 'bool', PREVIEW, P),
    s('preview_download_by_default', 'false', 'bool', PREVIEW, P),
    s('share_preview_download_by_default', 'true', 'bool', PREVIEW, P, { help: 'a shared file opens on its download, with a button to preview it' }),
    s('share_preview_archives_by_default', 'false', 'bool', PREVIEW, P, { help: 'a shared archive opens on its contents, even when files open on their download' }),
    s('readme_autorender', 'true', 'bool', PREVIEW, P),
    s('filter_readme_scripts', 'true', 'bool', PREVIEW, P),
    s('preview_archives_by_default', 'true', 'bool', PREVIEW, P),
    // Atrium's own (as OpenList's): online offices over WOPI (wopi/, docs/office-and-thumbnails.md)
    s('wopi_enabled', 'false', 'bool', PREVIEW, P, { help: 'files open in an online office (Collabora Online, ONLYOFFICE Docs) through WOPI' }),
    s('wopi_services', '[]', 'text', PREVIEW, P, { help: 'a JSON list, one entry per online office: its name, the address of its discovery XML and the extensions it opens (empty: all it lists; docs/office-and-thumbnails.md)' }),
    s('wopi_share_view', 'true', 'bool', PREVIEW, P, { help: 'share visitors may open shared documents in the online office, read-only' }),
    s('wopi_max_file_size', '104857600', 'number', PREVIEW, PR, { help: 'bytes an online office may save into one file; 0 means no limit' }),
    // Atrium's own: thumbnails of every storage (thumbs/, docs/office-and-thumbnails.md)
    s(THUMB_SETTINGS.enabled, 'true', 'bool', PREVIEW, PR, { help: "listings carry a thumbnail link for images, videos, audio covers and PDFs of every storage (Local's own thumbnail option still wins)" }),
    s(THUMB_SETTINGS.prefetch, 'true', 'bool', PREVIEW, PR, { help: 'thumbnails of a listed folder are made in the background, after any a client asks for' }),
    s(THUMB_SETTINGS.sizes, '144,256,512', 'string', PREVIEW, PR, { help: 'longest sides in pixels a client may ask with size=; the first is the default and the one made in the background' }),
    s(THUMB_SETTINGS.workers, '2', 'number', PREVIEW, PR, { help: 'thumbnails made at the same time' }),
    s(THUMB_SETTINGS.maxSource, '64', 'number', PREVIEW, PR, { help: 'MiB an image or PDF may have to get a thumbnail (they are read whole; videos and audio are read by ranges)' }),
    s(THUMB_SETTINGS.maxPixels, '100000000', 'number', PREVIEW, PR, { help: 'pixels an image may have to be decoded; larger ones are refused from their header' }),
    s(THUMB_SETTINGS.timeout, '30', 'number', PREVIEW, PR, { help: 'seconds one thumbnail may take' }),
    s(THUMB_SETTINGS.cacheSize, '1024', 'number', PREVIEW, PR, { help: 'MiB of thumbnails kept under <data>/thumbs; past it the least recently used are removed' }),
    // global
    s('hide_files', '/\\/README.md/i', 'text', GLOBAL, P),
    s('package_download', 'true', 'bool', GLOBAL, P),
    s('customize_head', '', 'text', GLOBAL, PR),
    s('customize_body', '', 'text', GLOBAL, PR),
    s('link_expiration', '0', 'number', GLOBAL, PR, { help: 'hours, 0 means never expire' }),
    s('sign_all', 'true', 'bool', GLOBAL, PR),
    s('privacy_regs', [IPV4, IPV6, 'access_token=(.*?)&'].join('\n'), 'text', GLOBAL, PR, { help: 'one regular expression per line; matches in error messages are masked' }),
    s('ocr_api', 'https://api.nn.ci/ocr/file/json', 'string', GLOBAL, P),
    s('filename_char_mapping', '{"/": "|"}', 'text', GLOBAL, P),
    s('forward_direct_link_params', 'false', 'bool', GLOBAL, P),
    s('non_efs_zip_encoding', '', 'string', GLOBAL, PR, { help: 'encoding of zip entry names not flagged UTF-8 (e.g. gbk, big5 or Shift-JIS); empty: UTF-8 when valid, else IBM437' }),
    // Atrium's own: bounds on what one archive may expand to (zip bombs)
    s('archive_max_size', '10240', 'number', GLOBAL, PR, { help: 'MiB an archive may expand to when extracted, 0 = no limit' }),
    s('archive_max_ratio', '1000', 'number', GLOBAL, PR, { help: 'expanded / archive size above which extraction stops (past 64 MiB), 0 = no limit' }),
    s('archive_max_entries', '1000000', 'number', GLOBAL, PR, { help: 'entries an archive may hold to be listed or extracted, 0 = no limit' }),
    s('ignore_direct_link_params', 'sign,alist_ts', 'string', GLOBAL, P),
    s('webauthn_login_enabled', 'false', 'bool', GLOBAL, P, { help: 'users may add passkeys on their profile page and sign in with them (the site address of the configuration names the site; without it, only localhost works)' }),
    s('share_preview', 'false', 'bool', GLOBAL, P, { help: 'share visitors may preview files in the web UI (otherwise they download)' }),
    s('share_archive_preview', 'false', 'bool', GLOBAL, P, { help: 'share visitors may look inside shared archives and download single entries' }),
    s('share_force_proxy', 'true', 'bool', GLOBAL, PR, { help: '/sd always streams through this server instead of redirecting to the storage' }),
    s('share_summary_content', SHARE_SUMMARY, 'text', GLOBAL, P, { help: 'the message copied with a share link: a template where the creator, the shared files, the link, its code and its expiry are filled in' }),
    // OpenList's hook after writing: the index follows writes (with auto_update_index). On by
    // default here, where the index always followed writes (OpenList's default is off).
    s('handle_hook_after_writing', 'true', 'bool', GLOBAL, PR, { help: 'writes update the search index (when automatic index updates are on)' }),
    s('handle_hook_rate_limit', '0', 'number', GLOBAL, PR, { help: 'folders listed per second while the index follows writes; 0 means no limit' }),
    s('ignore_system_files', 'false', 'bool', GLOBAL, PR, { help: 'refuse uploads of .DS_Store, desktop.ini, Thumbs.db, @eaDir and ._ files' }),
    // Atrium's own: the audit log (audit/log.ts, docs/audit-and-hooks.md)
    s('audit_log_enabled', 'true', 'bool', GLOBAL, PR, { help: 'record every operation (sign-ins, downloads, writes, shares, admin changes) in the audit log' }),
    s('audit_log_listings', 'false', 'bool', GLOBAL, PR, { help: 'also record folder listings (many events)' }),
    s('audit_log_retention_days', '90', 'number', GLOBAL, PR, { help: 'days the audit log keeps an event; 0 keeps them all' }),
    // Atrium's own: fair under load (server/fairness.ts)
    s('max_requests_per_user', String(8 * availableParallelism()), 'number', GLOBAL, PR, { help: "API and raw-link requests one user (or one visitor's address) may have running at once; more wait in that user's own queue (default 8 per CPU core of the machine that made the database), 0 = no limit", docDefault: '8 × CPU cores' }),
    s('max_request_wait', '30', 'number', GLOBAL, PR, { help: "seconds a request past its user's limit waits for its turn before it is answered 429 with Retry-After" }),
    // single (internal)
    s('token', newAdminToken(), 'string', SINGLE, PR),
    // index
    s('search_index', 'none', 'select', INDEX, P, { options: 'database,database_non_full_text,bleve,meilisearch,none' }),
    s('auto_update_index', 'false', 'bool', INDEX, P),
    s('ignore_paths', '', 'text', INDEX, PR, { help: 'one path per line' }),
    s('max_index_depth', '20', 'number', INDEX, PR, { help: 'max depth of index' }),
    s('index_progress', '{}', 'text', SINGLE, PR),
    // sso (OpenID Connect; Casdoor is served as an OpenID Connect provider too)
    s('sso_login_enabled', 'false', 'bool', SSO, P, { help: 'Show the single sign-on button and accept sign-ins from the provider' }),
    s('sso_login_platform', '', 'select', SSO, P, { options: 'Casdoor,Github,Microsoft,Google,Dingtalk,OIDC', help: 'OIDC for any OpenID Connect provider; Casdoor works the same way; the other choices are not supported here' }),
    s('sso_client_id', '', 'string', SSO, PR, { help: 'The client ID this server is registered under at the provider' }),
    s('sso_client_secret', '', 'string', SSO, PR, { help: 'The client secret from the provider; leave empty for a public client' }),
    // The identity claim: `sub` is the one the provider keeps unique and stable (the original's default
    // is `name`; migration 10 moves a stored `name` once, so a deliberate `name` set later stays).
    s('sso_oidc_username_key', 'sub', 'string', SSO, PR, { help: 'Claim of the ID token that identifies the person (sub is unique and never changes; a name can)' }),
    s('sso_organization_name', '', 'string', SSO, PR, { help: 'Not used by OpenID Connect (kept for backups of the original)' }),
    s('sso_application_name', '', 'string', SSO, PR, { help: 'Not used by OpenID Connect (kept for backups of the original)' }),
    s('sso_endpoint_name', '', 'string', SSO, PR, { help: "The provider's issuer address (its discovery document is read from /.well-known/openid-configuration below it)" }),
    s('sso_jwt_public_key', '', 'string', SSO, PR, { help: "Not used: ID tokens are checked with the keys the provider publishes" }),
    s('sso_extra_scopes', '', 'string', SSO, PR, { help: 'More scopes to ask for besides openid and profile, separated by spaces' }),
    s('sso_auto_register', 'false', 'bool', SSO, PR, { help: 'Create an account the first time an unknown person signs in; when off, they must bind an existing account first' }),
    s('sso_default_dir', '/', 'string', SSO, PR, { help: 'Base path of accounts created at sign-in' }),
    s('sso_default_permission', '0', 'number', SSO, PR, { help: 'Permissions of accounts created at sign-in' }),
    s('sso_compatibility_mode', 'false', 'bool', SSO, P, { help: 'Return from the provider by redirecting this page instead of through a popup window' }),
    // ldap
    s('ldap_login_enabled', 'false', 'bool', LDAP, P),
    s('ldap_server', '', 'string', LDAP, PR),
    s('ldap_manager_dn', '', 'string', LDAP, PR),
    s('ldap_manager_password', '', 'string', LDAP, PR),
    s('ldap_user_search_base', '', 'string', LDAP, PR),
    s('ldap_user_search_filter', '(uid=%s)', 'string', LDAP, PR),
    s('ldap_default_dir', '/', 'string', LDAP, PR),
    s('ldap_default_permission', '0', 'number', LDAP, PR),
    s('ldap_login_tips', 'login with ldap', 'string', LDAP, P),
    // Atrium's own: StartTLS on ldap:// and the CA (PEM) that signed the server's certificate
    s('ldap_start_tls', 'false', 'bool', LDAP, PR, { help: 'Upgrade an ldap:// connection with StartTLS (ldaps:// is always TLS)' }),
    s('ldap_ca_cert', '', 'text', LDAP, PR, { help: "PEM of the CA that signed the directory's certificate; empty uses the system's CAs" }),
    s('ldap_skip_tls_verify', 'false', 'bool', LDAP, PR, { help: 'Accept any certificate from the directory (unsafe; for tests only)' }),
    // s3
    s('s3_access_key_id', '', 'string', S3, PR),
    s('s3_secret_access_key', '', 'string', S3, PR),
    s('s3_buckets', '[]', 'string', S3, PR),
    // offline download tools (sorted by key)
    // OpenList's cloud tools (src/offline/cloud-tools.ts): saved by their set_* routes; Atrium has none of their drivers
    s('115_open_temp_dir', '', 'string', OFFLINE_DOWNLOAD, PR),
    s('115_temp_dir', '', 'string', OFFLINE_DOWNLOAD, PR),
    s('123_open_callback_url', '', 'string', OFFLINE_DOWNLOAD, PR),
    s('123_open_temp_dir', '', 'string', OFFLINE_DOWNLOAD, PR),
    s('123_temp_dir', '', 'string', OFFLINE_DOWNLOAD, PR),
    s('aria2_secret', '', 'string', OFFLINE_DOWNLOAD, PR),
    s('aria2_uri', 'http://localhost:6800/jsonrpc', 'string', OFFLINE_DOWNLOAD, PR),
    s('guangyapan_temp_dir', '', 'string', OFFLINE_DOWNLOAD, PR),
    s('pikpak_temp_dir', '', 'string', OFFLINE_DOWNLOAD, PR),
    s('qbittorrent_seedtime', '0', 'number', OFFLINE_DOWNLOAD, PR),
    s('qbittorrent_url', 'http://admin:adminadmin@localhost:8080/', 'string', OFFLINE_DOWNLOAD, PR),
    s('thunder_browser_temp_dir', '', 'string', OFFLINE_DOWNLOAD, PR),
    s('thunder_temp_dir', '', 'string', OFFLINE_DOWNLOAD, PR),
    s('thunderx_temp_dir', '', 'string', OFFLINE_DOWNLOAD, PR),
    s('transmission_seedtime', '0', 'number', OFFLINE_DOWNLOAD, PR),
    s('transmission_uri', 'http://localhost:9091/transmission/rpc', 'string', OFFLINE_DOWNLOAD, PR),
    // Atrium's own: the SSRF guard's switch and a size cap (MiB, 0 = none) for every tool
    s('offline_download_allow_private', 'false', 'bool', OFFLINE_DOWNLOAD, PR),
    s('offline_download_max_size', '0', 'number', OFFLINE_DOWNLOAD, PR),
    // Atrium's own: lets the server fetch storage-content URLs (UrlTree) on private addresses
    s('url_fetch_allow_private', 'false', 'bool', OFFLINE_DOWNLOAD, PR),
    // ftp and sftp servers (OpenList)
    s('ftp_public_host', '127.0.0.1', 'string', GROUP.FTP, PR),
    s('ftp_pasv_port_map', '', 'text', GROUP.FTP, PR),
    s('sftp_disable_password_login', 'false', 'bool', GROUP.FTP, PR),
    s('ftp_mandatory_tls', 'false', 'bool', GROUP.FTP, PR, { help: 'refuse logins before AUTH TLS' }),
    s('ftp_implicit_tls', 'false', 'bool', GROUP.FTP, PR, { help: 'every connection starts in TLS (clients connect with ftps://)' }),
    s('ftp_tls_private_key_path', '', 'string', GROUP.FTP, PR, { help: 'PEM private key; with the certificate it enables AUTH TLS' }),
    s('ftp_tls_public_cert_path', '', 'string', GROUP.FTP, PR, { help: 'PEM certificate (chain)' }),
    // chunked uploads (OpenList's multipart routes; Atrium's tus endpoint follows the same switch)
    s('multipart_enabled', 'true', 'bool', GROUP.TRAFFIC, P),
    s('multipart_chunk_size', '10', 'number', GROUP.TRAFFIC, P, { help: 'MB, the chunk size clients use when they do not choose one' }),
    // Atrium's own: when an unfinished upload is dropped, and how many one user may have open
    s('upload_expire_hours', '24', 'number', GROUP.TRAFFIC, PR, { help: 'hours without a new chunk after which an unfinished upload and its staged chunks are removed; 0 keeps them' }),
    s('upload_max_parallel', '8', 'number', GROUP.TRAFFIC, PR, { help: 'unfinished resumable uploads one user may have at a time; 0 means no limit' }),
    // traffic (OpenList): task threads and speed limits
    ...Object.entries(TASK_THREAD_SETTINGS).map(([kind, key]) =>
      s(key, String(opts.taskWorkers?.[kind as TaskKind] ?? 5), 'number', TRAFFIC, PR, { help: 'tasks of this kind run at once (at least 1)' }),
    ),
    ...SPEED_LIMIT_SETTINGS.map((key) => s(key, '-1', 'number', TRAFFIC, PR, { help: 'KiB/s, shared by all transfers; -1 means no limit' })),
    // Atrium's own: while 2FA is on, WebDAV/SFTP/FTP take app passwords only unless this is on
    s('protocol_password_with_2fa', 'false', 'bool', GROUP.FTP, PR, { help: 'Let the account password alone open WebDAV, SFTP and FTP for users with 2FA (app passwords always work)' }),
    // Atrium's own: who may read the OpenAPI document at /api/openapi.json
    s('openapi_public', 'true', 'bool', GLOBAL, PR, { help: 'anyone may read /api/openapi.json; off = admins only' }),
    // Atrium's own: the bearer token of GET /metrics (empty = no metrics endpoint)
    s('metrics_token', '', 'string', GLOBAL, PR, { help: 'Prometheus scrapes /metrics with "Authorization: Bearer <this>"; empty turns /metrics off' }),
  ];
}
