import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, parseListen } from '../../src/config/load.js';
import { parsePortMap } from '../../src/protocols/ftp/passive.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'atrium-cfg-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('config.json', () => {
  it('is created with defaults and a random JWT secret, paths relative to the data folder', () => {
    const d = tmp();
    const { config, file } = loadConfig(d, {});
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written.scheme).toMatchObject({ address: '0.0.0.0', http_port: 5244, https_port: -1 });
    expect(written.database).toMatchObject({ type: 'sqlite3', db_file: 'data.db', table_prefix: 'x_' });
    expect(written.jwt_secret).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(written.token_expires_in).toBe(48);
    expect(config.database.db_file).toBe(path.join(d, 'data.db'));
    expect(config.temp_dir).toBe(path.join(d, 'temp'));
    const again = loadConfig(d, {});
    expect(again.config.jwt_secret).toBe(written.jwt_secret);
  });

  it('keeps the values of an existing file and adds missing keys', () => {
    const d = tmp();
    writeFileSync(path.join(d, 'config.json'), JSON.stringify({ scheme: { http_port: 8080 }, jwt_secret: 'abcdefghijkl' }));
    const { config, file } = loadConfig(d, {});
    expect(config.scheme.http_port).toBe(8080);
    expect(config.scheme.address).toBe('0.0.0.0');
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written.jwt_secret).toBe('abcdefghijkl');
    expect(written.cors.allow_origins).toEqual(['*']);
  });

  it.each([
    [{ scheme: { htp_port: 1 } }, /unknown field "scheme.htp_port"/],
    [{ nonsense: true }, /unknown field "nonsense"/],
    [{ scheme: { http_port: '80' } }, /field "scheme.http_port" must be an integer/],
    [{ scheme: { http_port: 70000 } }, /field "scheme.http_port" must be -1 \(disabled\) or a port/],
    [{ database: { type: 'oracle' } }, /field "database.type" must be one of sqlite3, postgres, mysql/],
    [{ database: { db_file: 'x.sqlite' } }, /field "database.db_file" must end with ".db"/],
    [{ database: 'sqlite' }, /database must be an object/],
    [{ cors: { allow_origins: 'x' } }, /field "cors.allow_origins" must be an array of strings/],
    [{ log: { enable: 'yes' } }, /field "log.enable" must be a boolean/],
    [{ tasks: { copy: { workers: 0 } } }, /field "tasks.copy.workers" must be at least 1/],
    [{ scheme: { https_port: 443 } }, /cert_file" and "scheme.key_file" are required/],
  ])('refuses %j naming the field', (content, message) => {
    const d = tmp();
    writeFileSync(path.join(d, 'config.json'), JSON.stringify(content));
    expect(() => loadConfig(d, {})).toThrow(message);
  });

  it('refuses malformed JSON with the file name', () => {
    const d = tmp();
    writeFileSync(path.join(d, 'config.json'), '{ "scheme": ');
    expect(() => loadConfig(d, {})).toThrow(/config\.json is not valid JSON/);
  });

  it('applies environment overrides without writing them to the file; force ignores them', () => {
    const d = tmp();
    const env = { ATRIUM_HTTP_PORT: '6000', ALIST_DB_TYPE: 'postgres', ATRIUM_CORS_ALLOW_ORIGINS: 'a.example, b.example', ATRIUM_LOG_ENABLE: 'false', ATRIUM_JWT_SECRET: 'from-the-env-123' };
    const { config, file } = loadConfig(d, env);
    expect(config.scheme.http_port).toBe(6000);
    expect(config.database.type).toBe('postgres');
    expect(config.cors.allow_origins).toEqual(['a.example', 'b.example']);
    expect(config.log.enable).toBe(false);
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written.scheme.http_port).toBe(5244);
    expect(written.jwt_secret).not.toBe('from-the-env-123');
    writeFileSync(file, JSON.stringify({ ...written, force: true }));
    expect(loadConfig(d, env).config.scheme.http_port).toBe(5244);
  });

  it('refuses a malformed environment value naming the variable', () => {
    expect(() => loadConfig(tmp(), { ATRIUM_HTTP_PORT: 'eighty' })).toThrow(/ATRIUM_HTTP_PORT must be an integer/);
    expect(() => loadConfig(tmp(), { ATRIUM_FORCE_HTTPS: 'maybe' })).toThrow(/ATRIUM_FORCE_HTTPS must be true or false/);
    expect(() => loadConfig(tmp(), { ATRIUM_DB_TYPE: 'oracle' })).toThrow(/database.type/);
  });
});

describe('sftp and ftp config keys', () => {
  it('are written with the original defaults and read from the environment', () => {
    const d = tmp();
    const { file, config } = loadConfig(d, {});
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written.sftp).toEqual({ enable: false, listen: ':5222', rsa_host_key: false });
    expect(written.ftp).toMatchObject({ enable: false, listen: ':5221', find_pasv_port_attempts: 50, idle_timeout: 900, connection_timeout: 30, enable_pasv_conn_ip_check: true });
    expect(config.sftp.enable).toBe(false);
    const env = loadConfig(d, { ATRIUM_SFTP_ENABLE: 'true', ALIST_SFTP_LISTEN: '127.0.0.1:2022', ATRIUM_FTP_IDLE_TIMEOUT: '60' }).config;
    expect(env.sftp).toEqual({ enable: true, listen: '127.0.0.1:2022', rsa_host_key: false });
    expect(env.ftp.idle_timeout).toBe(60);
  });

  it('refuse a malformed listen address or a negative timeout, naming the field', () => {
    const d = tmp();
    writeFileSync(path.join(d, 'config.json'), JSON.stringify({ sftp: { listen: '5222' } }));
    expect(() => loadConfig(d, {})).toThrow(/"sftp\.listen"/);
    writeFileSync(path.join(d, 'config.json'), JSON.stringify({ ftp: { idle_timeout: -1 } }));
    expect(() => loadConfig(d, {})).toThrow(/"ftp\.idle_timeout"/);
    expect(() => loadConfig(tmp(), { ATRIUM_FTP_LISTEN: 'host:99999' })).toThrow(/"ftp\.listen"/);
  });

  it('parseListen and the passive port map', () => {
    expect(parseListen('x', ':5222')).toEqual({ host: '', port: 5222 });
    expect(parseListen('x', '[::1]:22')).toEqual({ host: '::1', port: 22 });
    expect(parseListen('x', '127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parsePortMap('')).toEqual([]);
    expect(parsePortMap('30000-30001\n40000:50000')).toEqual([
      { exposed: 30000, listened: 30000 },
      { exposed: 30001, listened: 30001 },
      { exposed: 40000, listened: 50000 },
    ]);
    expect(() => parsePortMap('1-2:3')).toThrow(/different lengths/);
    expect(() => parsePortMap('abc')).toThrow(/not a port/);
  });
});
