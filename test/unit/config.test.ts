import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';

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
