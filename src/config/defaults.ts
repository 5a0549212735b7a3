import type { TaskSection } from '../tasks/kinds.js';
import { randomAlnum } from '../util/random.js';

export type DbType = 'sqlite3' | 'postgres' | 'mysql';

export interface TaskKindConfig {
  workers: number;
  max_retry: number;
  task_persistant: boolean;
}

export interface Config {
  force: boolean;
  site_url: string;
  cdn: string;
  jwt_secret: string;
  token_expires_in: number;
  database: {
    type: DbType;
    host: string;
    port: number;
    user: string;
    password: string;
    name: string;
    db_file: string;
    table_prefix: string;
    ssl_mode: string;
    dsn: string;
  };
  scheme: {
    address: string;
    http_port: number;
    https_port: number;
    force_https: boolean;
    cert_file: string;
    key_file: string;
    unix_file: string;
    unix_file_perm: string;
  };
  temp_dir: string;
  dist_dir: string;
  log: {
    enable: boolean;
    level: string;
    name: string;
    max_size: number;
    max_backups: number;
    max_age: number;
    compress: boolean;
  };
  delayed_start: number;
  max_connections: number;
  tls_insecure_skip_verify: boolean;
  /** One section per task kind (tasks/kinds.ts). */
  tasks: Record<TaskSection, TaskKindConfig> & {
    allow_retry_canceled: boolean;
  };
  cors: {
    allow_origins: string[];
    allow_methods: string[];
    allow_headers: string[];
  };
  /** Several processes sharing one database: invalidations and task queues go through Redis. */
  redis: {
    url: string;
    key_prefix: string;
  };
  ftp: FtpConfig;
  sftp: {
    enable: boolean;
    listen: string;
    /** Also make an RSA 4096 host key (for clients without Ed25519); seconds on the first start. */
    rsa_host_key: boolean;
  };
  /** The S3-compatible server (the original's `s3` section): its own port, TLS with scheme's cert. */
  s3: {
    enable: boolean;
    port: number;
    ssl: boolean;
  };
  /** Event hooks (docs/audit-and-hooks.md): `allow_commands` lets admins define hooks that run programs. */
  hooks: {
    allow_commands: boolean;
  };
}

/** The FTP server (wire-api.md §15.3); `listen` is `[host]:port`. */
export interface FtpConfig {
  enable: boolean;
  listen: string;
  find_pasv_port_attempts: number;
  active_transfer_port_non_20: boolean;
  idle_timeout: number;
  connection_timeout: number;
  disable_active_mode: boolean;
  default_transfer_binary: boolean;
  enable_active_conn_ip_check: boolean;
  enable_pasv_conn_ip_check: boolean;
}

const task = (workers: number, max_retry: number, task_persistant: boolean): TaskKindConfig => ({
  workers,
  max_retry,
  task_persistant,
});

/**
 * The defaults written into a new config.json. File paths are relative to the data
 * folder (see config/load.ts), so a data folder can be moved as a whole.
 */
export function defaultConfig(): Config {
  return {
    force: false,
    site_url: '',
    cdn: '',
    jwt_secret: randomAlnum(16),
    token_expires_in: 48,
    database: {
      type: 'sqlite3',
      host: '',
      port: 0,
      user: '',
      password: '',
      name: '',
      db_file: 'data.db',
      table_prefix: 'x_',
      ssl_mode: '',
      dsn: '',
    },
    scheme: {
      address: '0.0.0.0',
      http_port: 5244,
      https_port: -1,
      force_https: false,
      cert_file: '',
      key_file: '',
      unix_file: '',
      unix_file_perm: '',
    },
    temp_dir: 'temp',
    dist_dir: '',
    log: {
      enable: true,
      level: 'info',
      name: 'log/log.log',
      max_size: 50,
      max_backups: 30,
      max_age: 28,
      compress: false,
    },
    delayed_start: 0,
    max_connections: 0,
    tls_insecure_skip_verify: false,
    tasks: {
      download: task(5, 1, true),
      transfer: task(5, 2, true),
      // Atrium keeps upload tasks too (the original does not), so a restart never loses one.
      upload: task(5, 0, true),
      copy: task(5, 2, true),
      move: task(5, 2, true),
      decompress: task(5, 2, true),
      // Kept too: it owns the extracted files in temp_dir, which a restart would otherwise sweep.
      decompress_upload: task(5, 2, true),
      // Sync runs (src/sync/): kept so a restart resumes one; no retry (the next run carries on from what arrived).
      sync: task(2, 0, true),
      allow_retry_canceled: false,
    },
    cors: {
      allow_origins: ['*'],
      allow_methods: ['*'],
      allow_headers: ['*'],
    },
    redis: {
      url: '',
      key_prefix: 'atrium:',
    },
    ftp: {
      enable: false,
      listen: ':5221',
      find_pasv_port_attempts: 50,
      active_transfer_port_non_20: false,
      idle_timeout: 900,
      connection_timeout: 30,
      disable_active_mode: false,
      default_transfer_binary: false,
      enable_active_conn_ip_check: true,
      enable_pasv_conn_ip_check: true,
    },
    sftp: {
      enable: false,
      listen: ':5222',
      rsa_host_key: false,
    },
    s3: {
      enable: false,
      port: 5246,
      ssl: false,
    },
    hooks: {
      allow_commands: false,
    },
  };
}
