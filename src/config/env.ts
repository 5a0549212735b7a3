import { ConfigError } from '../errors.js';
import { TASK_SECTIONS } from '../tasks/kinds.js';
import type { Config } from './defaults.js';

/** Env prefixes, first match wins: our own, then the original's so existing deployments keep working. */
export const ENV_PREFIXES = ['ATRIUM_', 'ALIST_'];

/** Environment variable (without prefix) → config path. */
const ENV_FIELDS: Array<[string, string]> = [
  ['SITE_URL', 'site_url'],
  ['CDN', 'cdn'],
  ['JWT_SECRET', 'jwt_secret'],
  ['TOKEN_EXPIRES_IN', 'token_expires_in'],
  ['DB_TYPE', 'database.type'],
  ['DB_HOST', 'database.host'],
  ['DB_PORT', 'database.port'],
  ['DB_USER', 'database.user'],
  ['DB_PASS', 'database.password'],
  ['DB_NAME', 'database.name'],
  ['DB_FILE', 'database.db_file'],
  ['DB_TABLE_PREFIX', 'database.table_prefix'],
  ['DB_SSL_MODE', 'database.ssl_mode'],
  ['DB_DSN', 'database.dsn'],
  ['ADDR', 'scheme.address'],
  ['HTTP_PORT', 'scheme.http_port'],
  ['HTTPS_PORT', 'scheme.https_port'],
  ['FORCE_HTTPS', 'scheme.force_https'],
  ['CERT_FILE', 'scheme.cert_file'],
  ['KEY_FILE', 'scheme.key_file'],
  ['UNIX_FILE', 'scheme.unix_file'],
  ['UNIX_FILE_PERM', 'scheme.unix_file_perm'],
  ['TEMP_DIR', 'temp_dir'],
  ['DIST_DIR', 'dist_dir'],
  ['LOG_ENABLE', 'log.enable'],
  ['LOG_LEVEL', 'log.level'],
  ['LOG_NAME', 'log.name'],
  ['LOG_MAX_SIZE', 'log.max_size'],
  ['LOG_MAX_BACKUPS', 'log.max_backups'],
  ['LOG_MAX_AGE', 'log.max_age'],
  ['LOG_COMPRESS', 'log.compress'],
  ['DELAYED_START', 'delayed_start'],
  ['MAX_CONNECTIONS', 'max_connections'],
  ['TLS_INSECURE_SKIP_VERIFY', 'tls_insecure_skip_verify'],
  ['TASKS_ALLOW_RETRY_CANCELED', 'tasks.allow_retry_canceled'],
  ['CORS_ALLOW_ORIGINS', 'cors.allow_origins'],
  ['CORS_ALLOW_METHODS', 'cors.allow_methods'],
  ['CORS_ALLOW_HEADERS', 'cors.allow_headers'],
  ['REDIS_URL', 'redis.url'],
  ['REDIS_KEY_PREFIX', 'redis.key_prefix'],
];
for (const kind of TASK_SECTIONS) {
  const k = kind.toUpperCase();
  ENV_FIELDS.push([`TASKS_${k}_WORKERS`, `tasks.${kind}.workers`]);
  ENV_FIELDS.push([`TASKS_${k}_MAX_RETRY`, `tasks.${kind}.max_retry`]);
  ENV_FIELDS.push([`TASKS_${k}_TASK_PERSISTANT`, `tasks.${kind}.task_persistant`]);
}

ENV_FIELDS.push(['SFTP_ENABLE', 'sftp.enable'], ['SFTP_LISTEN', 'sftp.listen'], ['SFTP_RSA_HOST_KEY', 'sftp.rsa_host_key']);
ENV_FIELDS.push(['S3_ENABLE', 's3.enable'], ['S3_PORT', 's3.port'], ['S3_SSL', 's3.ssl']);
ENV_FIELDS.push(['HOOKS_ALLOW_COMMANDS', 'hooks.allow_commands']);
for (const key of ['enable', 'listen', 'find_pasv_port_attempts', 'active_transfer_port_non_20', 'idle_timeout', 'connection_timeout', 'disable_active_mode', 'default_transfer_binary', 'enable_active_conn_ip_check', 'enable_pasv_conn_ip_check']) {
  ENV_FIELDS.push([`FTP_${key.toUpperCase()}`, `ftp.${key}`]);
}

export const ENV_FIELD_NAMES: ReadonlyArray<readonly [string, string]> = ENV_FIELDS;

function lookup(env: NodeJS.ProcessEnv, name: string): [string, string] | undefined {
  for (const prefix of ENV_PREFIXES) {
    const value = env[prefix + name];
    if (value !== undefined) return [prefix + name, value];
  }
  return undefined;
}

/** Applies environment overrides in place; a malformed value names its variable. */
export function applyEnv(config: Config, env: NodeJS.ProcessEnv): void {
  for (const [name, field] of ENV_FIELDS) {
    const found = lookup(env, name);
    if (!found) continue;
    const [variable, raw] = found;
    const parts = field.split('.');
    const last = parts.pop()!;
    let target = config as unknown as Record<string, unknown>;
    for (const part of parts) target = target[part] as Record<string, unknown>;
    const current = target[last];
    if (Array.isArray(current)) {
      target[last] = raw.split(',').map((s) => s.trim()).filter(Boolean);
    } else if (typeof current === 'number') {
      if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`environment variable ${variable} must be an integer, got "${raw}"`);
      target[last] = Number(raw.trim());
    } else if (typeof current === 'boolean') {
      const v = raw.trim().toLowerCase();
      if (!['true', 'false', '1', '0'].includes(v)) {
        throw new ConfigError(`environment variable ${variable} must be true or false, got "${raw}"`);
      }
      target[last] = v === 'true' || v === '1';
    } else {
      target[last] = raw;
    }
  }
}

/** The initial admin password from the environment, if given. */
export function envAdminPassword(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return lookup(env, 'ADMIN_PASSWORD')?.[1];
}
