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

describe('sftp and ftp config keys', () => {
  it('are written with the original defaults and read from the environment', () => {
    const d = tmp();
    const { file, config } = loadConfig(d, {});
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written.sftp).toEqual({ enable: false, listen: ':5222' });
    expect(written.ftp).toMatchObject({ enable: false, listen: ':5221', find_pasv_port_attempts: 50, idle_timeout: 900, connection_timeout: 30, enable_pasv_conn_ip_check: true });
    expect(config.sftp.enable).toBe(false);
    const env = loadConfig(d, { ATRIUM_SFTP_ENABLE: 'true', ALIST_SFTP_LISTEN: '127.0.0.1:2022', ATRIUM_FTP_IDLE_TIMEOUT: '60' }).config;
    expect(env.sftp).toEqual({ enable: true, listen: '127.0.0.1:2022' });
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
