import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';

type Doc = { openapi: string; paths: Record<string, Record<string, any>>; components: any };

describe('OpenAPI document', () => {
  let s: TestServer;
  let admin: string;
  let doc: Doc;
  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    const res = await s.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    doc = res.json();
  });
  afterAll(async () => {
    await s.core.storages.ready();
    await s.destroy();
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(doc.openapi).toBe('3.1.0');
  });

  it('documents every registered /api route, with one operation per method', () => {
    const registered = s.app.routeTable.api();
    // The table sees routes however they were registered: JSON routes, uploads, this document.
    const keys = registered.map((r) => `${r.method} ${r.url}`);
    expect(keys).toEqual(expect.arrayContaining(['GET /api/fs/list', 'POST /api/fs/list', 'PUT /api/fs/put', 'PUT /api/fs/form', 'GET /api/openapi.json']));
    expect(registered.length).toBeGreaterThan(70);
    const missing = registered.filter((r) => !doc.paths[r.url.replace(/:(\w+)/g, '{$1}')]?.[r.method.toLowerCase()]).map((r) => `${r.method} ${r.url}`);
    expect(missing).toEqual([]);
    const operations = Object.values(doc.paths).flatMap((item) => Object.keys(item));
    expect(operations.length).toBe(new Set(keys).size);
  });

  it('describes inputs: query parameters for GET, a JSON body for POST, the upload headers and body', () => {
    const listGet = doc.paths['/api/fs/list']!.get;
    expect(listGet.parameters.map((p: any) => p.name)).toEqual(['path', 'password', 'folder_password', 'page', 'per_page', 'refresh']);
    const listPost = doc.paths['/api/fs/list']!.post;
    expect(listPost.requestBody.content['application/json'].schema.properties.path).toMatchObject({ type: 'string', default: '/' });
    const create = doc.paths['/api/admin/user/create']!.post;
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['username']);
    expect(create.security).toEqual([{ token: [] }]);
    expect(doc.paths['/api/public/settings']!.get.security).toEqual([]);
    const put = doc.paths['/api/fs/put']!.put;
    expect(put.parameters.map((p: any) => p.name)).toContain('File-Path');
    expect(Object.keys(put.requestBody.content)).toEqual(['application/octet-stream']);
    expect(Object.keys(doc.paths['/api/fs/form']!.put.requestBody.content)).toEqual(['multipart/form-data']);
  });

  it('declares the data shape of every JSON route', () => {
    const undeclared = Object.entries(doc.paths).flatMap(([p, item]) =>
      Object.entries(item)
        .filter(([, op]) => {
          const schema = op.responses['200'].content['application/json'].schema;
          return schema.anyOf && Object.keys(schema.anyOf[0].properties.data).length === 0;
        })
        .map(([m]) => `${m.toUpperCase()} ${p}`),
    );
    expect(undeclared).toEqual([]);
  });

  it("real answers match the documented envelope and data shape", async () => {
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema({ $id: 'doc', components: doc.components });
    const check = async (method: string, url: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) => {
      const [pathOnly] = url.split('?');
      const schema = doc.paths[pathOnly!]![method.toLowerCase()].responses['200'].content['application/json'].schema;
      const success = schema.anyOf[0];
      expect(success.properties.data, `${method} ${url} has a data shape`).not.toEqual({});
      const answer = await s.api(method, url, { token: admin, ...opts });
      expect(answer.code, `${method} ${url}: ${answer.message}`).toBe(200);
      const validate = ajv.compile(success);
      expect(validate.errors ?? [], `${method} ${url}`).toEqual([]);
      expect(validate(answer), `${method} ${url}: ${JSON.stringify(validate.errors)}`).toBe(true);
      return answer;
    };
    await check('GET', '/api/me');
    const listed = await check('POST', '/api/fs/list', { body: { path: '/' } });
    await check('GET', '/api/admin/user/list');
    await check('GET', '/api/admin/storage/list');
    await check('GET', '/api/admin/meta/list');
    await check('GET', '/api/admin/setting/list');
    await check('GET', '/api/admin/setting/get?key=site_title');
    await check('GET', '/api/admin/user/get?id=1');
    await check('GET', '/api/admin/storage/get?id=1');
    await check('GET', '/api/task/upload/undone');
    await check('GET', '/api/public/settings');
    await check('POST', '/api/fs/dirs', { body: { path: '/' } });
    await check('GET', '/api/admin/driver/names');
    await check('GET', '/api/admin/driver/info?driver=Local');
    await check('GET', '/api/admin/driver/list');
    await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'search_index', value: 'database' }] });
    await check('GET', '/api/admin/index/progress');
    await check('POST', '/api/fs/search', { body: { parent: '/', keywords: 'x', page: 1, per_page: 10 } });
    await check('GET', '/api/me/sshkey/list');
    await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'webauthn_login_enabled', value: 'true' }] });
    const passkey = new SoftAuthenticator('http://localhost');
    const reg = await check('GET', '/api/authn/webauthn_begin_registration');
    await check('POST', '/api/authn/webauthn_finish_registration', { body: passkey.create(reg.data.options.publicKey), headers: { session: reg.data.session } });
    const passkeys = await check('GET', '/api/authn/getcredentials');
    const login = await check('GET', '/api/authn/webauthn_begin_login');
    await check('POST', '/api/authn/webauthn_finish_login', { body: passkey.get(login.data.options.publicKey), headers: { session: login.data.session } });
    await check('POST', '/api/authn/delete_authn', { body: { id: passkeys.data[0].id } });
    await check('GET', '/api/admin/setting/default');
    await check('GET', '/api/public/offline_download_tools');
    await check('POST', '/api/fs/mkdir', { body: { path: '/openapi-made' } });
    const made = await check('POST', '/api/fs/get', { body: { path: '/openapi-made' } });
    expect(made.data.is_dir).toBe(true);
    expect(listed.data.total).toBeGreaterThanOrEqual(0);

    // A wrong shape is caught: the checker can fail.
    const userList = doc.paths['/api/admin/user/list']!.get.responses['200'].content['application/json'].schema.anyOf[0];
    expect(ajv.compile(userList)({ code: 200, message: 'success', data: { content: [{ id: 'x' }], total: 1 } })).toBe(false);
  });

  it('is admin-only when openapi_public is off', async () => {
    await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'openapi_public', value: 'false' }] });
    try {
      const anon = await s.inject({ method: 'GET', url: '/api/openapi.json' });
      expect(anon.json()).toMatchObject({ code: 401, data: null });
      const asAdmin = await s.inject({ method: 'GET', url: '/api/openapi.json', headers: { authorization: admin } });
      expect(asAdmin.json().openapi).toBe('3.1.0');
    } finally {
      await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'openapi_public', value: 'true' }] });
    }
  });

  it('serves a reference page and its renderer from this server, nothing from a CDN', async () => {
    const page = await s.inject({ method: 'GET', url: '/openapi' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    const refs = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs).toEqual(['/openapi/swagger-ui.css', '/openapi/swagger-ui-bundle.js']);
    expect(page.body).toContain('"/api/openapi.json"');
    for (const ref of refs) {
      const asset = await s.inject({ method: 'GET', url: ref });
      expect(asset.statusCode).toBe(200);
      expect(asset.body.length).toBeGreaterThan(10_000);
    }
    expect((await s.inject({ method: 'GET', url: '/openapi/swagger-ui-bundle.js' })).body).toContain('SwaggerUIBundle');
  });
});
