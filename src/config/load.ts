import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { type Config, defaultConfig } from './defaults.js';
import { applyEnv } from './env.js';

export interface LoadedConfig {
  /** Absolute path of the data folder. */
  dataDir: string;
  /** Absolute path of config.json. */
  file: string;
  /** The effective configuration (file over defaults, then environment), paths resolved. */
  config: Config;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/**
 * Merges `input` over `base` (a defaults object), refusing keys the defaults do not have
 * and values whose JSON type differs from the default's. `where` names the field in errors.
 */
function mergeChecked(base: Record<string, unknown>, input: unknown, where: string): void {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new ConfigError(`${where || 'config'} must be an object, got ${describe(input)}`);
  }
  for (const [key, value] of Object.entries(input as Record<string, Json>)) {
    const field = where ? `${where}.${key}` : key;
    if (!Object.prototype.hasOwnProperty.call(base, key)) {
      throw new ConfigError(`unknown field "${field}"`);
    }
    const current = base[key];
    if (Array.isArray(current)) {
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
        throw new ConfigError(`field "${field}" must be an array of strings, got ${describe(value)}`);
      }
      base[key] = [...value];
    } else if (current !== null && typeof current === 'object') {
      mergeChecked(current as Record<string, unknown>, value, field);
    } else if (typeof current === 'number') {
      if (typeof value !== 'number' || !Number.isInteger(value)) {
        throw new ConfigError(`field "${field}" must be an integer, got ${JSON.stringify(value)}`);
      }
      base[key] = value;
    } else if (typeof value !== typeof current) {
      throw new ConfigError(`field "${field}" must be a ${typeof current}, got ${describe(value)}`);
    } else {
      base[key] = value;
    }
  }
}

const DB_TYPES = ['sqlite3', 'postgres', 'mysql'];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function checkPort(field: string, port: number, allowDisabled: boolean): void {
  if ((allowDisabled && port === -1) || (port >= 0 && port <= 65535)) return;
  throw new ConfigError(`field "${field}" must be ${allowDisabled ? '-1 (disabled) or ' : ''}a port 0-65535, got ${port}`);
}

/** Value rules beyond JSON types; names the offending field. */
export function validateConfig(c: Config): void {
  if (!DB_TYPES.includes(c.database.type)) {
    throw new ConfigError(`field "database.type" must be one of ${DB_TYPES.join(', ')}, got "${c.database.type}"`);
  }
  if (c.database.type === 'sqlite3' && !c.database.db_file.endsWith('.db')) {
    throw new ConfigError(`field "database.db_file" must end with ".db", got "${c.database.db_file}"`);
  }
  if (!/^[A-Za-z0-9_]*$/.test(c.database.table_prefix)) {
    throw new ConfigError(`field "database.table_prefix" may only hold letters, digits and "_"`);
  }
  if (c.jwt_secret.length < 8) throw new ConfigError('field "jwt_secret" must be at least 8 characters');
  if (c.token_expires_in <= 0) throw new ConfigError('field "token_expires_in" must be a positive number of hours');
  checkPort('database.port', c.database.port, false);
  checkPort('scheme.http_port', c.scheme.http_port, true);
  checkPort('scheme.https_port', c.scheme.https_port, true);
  if (c.scheme.https_port !== -1 && (!c.scheme.cert_file || !c.scheme.key_file)) {
    throw new ConfigError('fields "scheme.cert_file" and "scheme.key_file" are required when "scheme.https_port" is set');
  }
  if (c.scheme.unix_file_perm && !/^[0-7]{3,4}$/.test(c.scheme.unix_file_perm)) {
    throw new ConfigError(`field "scheme.unix_file_perm" must be an octal mode such as "0666"`);
  }
  if (!LOG_LEVELS.includes(c.log.level)) {
    throw new ConfigError(`field "log.level" must be one of ${LOG_LEVELS.join(', ')}`);
  }
  for (const key of ['max_size', 'max_backups', 'max_age'] as const) {
    if (c.log[key] < 0) throw new ConfigError(`field "log.${key}" must not be negative`);
  }
  if (c.delayed_start < 0) throw new ConfigError('field "delayed_start" must not be negative');
  if (c.max_connections < 0) throw new ConfigError('field "max_connections" must not be negative');
  if (c.sftp) parseListen('sftp.listen', c.sftp.listen);
  if (c.s3) {
    checkPort('s3.port', c.s3.port, false);
    if (c.s3.ssl && (!c.scheme.cert_file || !c.scheme.key_file)) {
      throw new ConfigError('fields "scheme.cert_file" and "scheme.key_file" are required when "s3.ssl" is true');
    }
  }
  if (c.ftp) {
    parseListen('ftp.listen', c.ftp.listen);
    for (const key of ['find_pasv_port_attempts', 'idle_timeout', 'connection_timeout'] as const) {
      if (c.ftp[key] < 0) throw new ConfigError(`field "ftp.${key}" must not be negative`);
    }
  }
  for (const [kind, t] of Object.entries(c.tasks)) {
    if (typeof t !== 'object') continue;
    if (t.workers < 1) throw new ConfigError(`field "tasks.${kind}.workers" must be at least 1`);
    if (t.max_retry < 0) throw new ConfigError(`field "tasks.${kind}.max_retry" must not be negative`);
  }
  if (c.redis.url && !/^rediss?:\/\/[^\s]+$/.test(c.redis.url)) {
    throw new ConfigError(`field "redis.url" must be a redis:// or rediss:// URL, got "${c.redis.url}"`);
  }
  if (!/^[A-Za-z0-9_:.-]*$/.test(c.redis.key_prefix)) {
    throw new ConfigError('field "redis.key_prefix" may only hold letters, digits and "_:.-"');
  }
}

/** `[host]:port` of the FTP and SFTP listeners (an IPv6 host in brackets). */
export function parseListen(field: string, listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:\[\]]*)):(\d{1,5})$/.exec(listen.trim());
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port > 65535) throw new ConfigError(`field "${field}" must be "[host]:port" such as ":5222" or "127.0.0.1:5222", got "${listen}"`);
  return { host: m[1] ?? m[2] ?? '', port };
}

function resolveIn(dataDir: string, p: string): string {
  return p === '' ? p : path.resolve(dataDir, p);
}

/** Reads (or creates) `<dataDir>/config.json`, re-writes it with any new default keys. */
export function loadConfig(dataDirArg: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const dataDir = path.resolve(dataDirArg);
  const file = path.join(dataDir, 'config.json');
  const config = defaultConfig();
  if (existsSync(file)) {
    const text = readFileSync(file, 'utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new ConfigError(`${file} is not valid JSON: ${(err as Error).message}`);
    }
    try {
      mergeChecked(config as unknown as Record<string, unknown>, parsed, '');
      validateConfig(config);
    } catch (err) {
      if (err instanceof ConfigError) throw new ConfigError(`${file}: ${err.message}`);
      throw err;
    }
  }
  mkdirSync(dataDir, { recursive: true });
  // Written before the environment is applied, so secrets passed by env never land on disk.
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);

  const effective = structuredClone(config);
  if (!effective.force) {
    applyEnv(effective, env);
    validateConfig(effective);
  }
  effective.database.db_file = resolveIn(dataDir, effective.database.db_file);
  effective.temp_dir = resolveIn(dataDir, effective.temp_dir);
  effective.dist_dir = resolveIn(dataDir, effective.dist_dir);
  effective.log.name = resolveIn(dataDir, effective.log.name);
  effective.scheme.cert_file = resolveIn(dataDir, effective.scheme.cert_file);
  effective.scheme.key_file = resolveIn(dataDir, effective.scheme.key_file);
  return { dataDir, file, config: effective };
}
