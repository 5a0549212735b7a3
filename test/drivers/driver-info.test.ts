import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';

// The `additional` items of the remote drivers, in the original's order (wire-api.md §10.5).
const ADDITIONAL: Record<string, string[]> = {
  S3: ['root_folder_path', 'bucket', 'endpoint', 'region', 'access_key_id', 'secret_access_key', 'session_token', 'custom_host', 'enable_custom_host_presign', 'sign_url_expire', 'placeholder', 'force_path_style', 'list_object_version', 'remove_bucket', 'add_filename_to_disposition', 'enable_direct_upload', 'direct_upload_host', 'user_agent'],
  WebDav: ['vendor', 'address', 'username', 'password', 'root_folder_path', 'tls_insecure_skip_verify'],
  FTP: ['address', 'encoding', 'username', 'password', 'root_folder_path', 'cwd_list'],
  SFTP: ['address', 'username', 'private_key', 'password', 'passphrase', 'root_folder_path', 'ignore_symlink_error'],
};

describe('driver list and info of the remote drivers', () => {
  let s: TestServer;
  let token: string;
  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    token = await s.login();
  });
  afterAll(() => s.destroy());

  it('names every driver, and lists each with its items and flags', async () => {
    const names = (await s.api('GET', '/api/admin/driver/names', { token })).data as string[];
    for (const n of ['Local', 'S3', 'Doge', 'WebDav', 'FTP', 'SFTP']) expect(names).toContain(n);
    const list = (await s.api('GET', '/api/admin/driver/list', { token })).data;
    for (const [name, items] of Object.entries(ADDITIONAL)) {
      expect(list[name].additional.map((i: { name: string }) => i.name)).toEqual(items);
      const info = await s.api('GET', `/api/admin/driver/info?driver=${encodeURIComponent(name)}`, { token });
      expect(info.data).toEqual(list[name]);
    }
    expect(list.Doge.additional).toEqual(list.S3.additional);
    expect(list.S3.config).toMatchObject({ name: 'S3', local_sort: true, only_proxy: false, only_local: false, default_root: '/' });
    expect(list.WebDav.config).toMatchObject({ name: 'WebDav', local_sort: true, only_proxy: true });
    expect(list.FTP.config).toMatchObject({ name: 'FTP', only_local: true });
    expect(list.SFTP.config).toMatchObject({ name: 'SFTP', only_local: true });
    const s3 = Object.fromEntries(list.S3.additional.map((i: { name: string }) => [i.name, i]));
    expect(s3.list_object_version).toMatchObject({ type: 'select', options: 'v1,v2', default: 'v1' });
    expect(s3.sign_url_expire).toMatchObject({ type: 'number', default: '4' });
    expect(s3.root_folder_path).toMatchObject({ default: '/', required: true });
    expect(list.SFTP.additional.find((i: { name: string }) => i.name === 'private_key').type).toBe('text');
    expect(list.WebDav.additional[0]).toMatchObject({ name: 'vendor', type: 'select', options: 'sharepoint,other', default: 'other' });
    // S3 can redirect, so it has web_proxy; proxy-only drivers do not.
    expect(list.S3.common.map((i: { name: string }) => i.name)).toContain('web_proxy');
    expect(list.SFTP.common.map((i: { name: string }) => i.name)).not.toContain('web_proxy');
  });
});
