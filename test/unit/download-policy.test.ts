import { describe, expect, it } from 'vitest';
import type { Link } from '../../src/drivers/types.js';
import type { Mounted } from '../../src/fs/storages.js';
import { downloadPlan, downProxyUrl, redirectOf } from '../../src/http/download-policy.js';

const settings = (over: Record<string, string> = {}) => {
  const v: Record<string, string> = { proxy_types: 'm3u8,flac', text_types: 'txt', share_force_proxy: 'false', ...over };
  return { get: (k: string) => v[k] ?? '', getBool: (k: string) => v[k] === 'true' };
};
const storage = (row: Partial<Mounted['row']> = {}, onlyProxy = false) =>
  ({ row: { web_proxy: false, webdav_policy: '', down_proxy_url: '', ...row }, factory: { config: { onlyProxy, onlyLocal: false } } }) as unknown as Mounted;
const url: Link = { url: 'https://storage.example.invalid/x' };

/** The one download policy (http/download-policy.ts): each front's rule, pinned. */
describe('downloadPlan', () => {
  it('/d redirects to the link unless the storage or the type proxies', () => {
    expect(redirectOf(downloadPlan('d', storage(), '/a/v.mp4', settings()), url)).toBe(url.url);
    expect(redirectOf(downloadPlan('d', storage({ web_proxy: true }), '/a/v.mp4', settings()), url)).toBeUndefined();
    expect(redirectOf(downloadPlan('d', storage({}, true), '/a/v.mp4', settings()), url)).toBeUndefined();
    expect(redirectOf(downloadPlan('d', storage(), '/a/s.m3u8', settings()), url)).toBeUndefined();
    // a link with a URL redirects even when it offers the bytes too (S3's links do); a file alone streams
    expect(redirectOf(downloadPlan('d', storage(), '/a/v.mp4', settings()), { ...url, file: {} as never })).toBe(url.url);
    expect(redirectOf(downloadPlan('d', storage(), '/a/v.mp4', settings()), { file: {} as never })).toBeUndefined();
  });

  it('/p streams where the storage proxies or the type may be proxied, else refuses; down_proxy_url first unless ?d', () => {
    expect(downloadPlan('p', storage(), '/a/v.mp4', settings()).refused).toBe(true);
    expect(downloadPlan('p', storage(), '/a/t.txt', settings())).toMatchObject({ refused: false, proxied: true });
    expect(downloadPlan('p', storage({ webdav_policy: 'use_proxy_url' }), '/a/v.mp4', settings()).refused).toBe(false);
    const dp = storage({ web_proxy: true, down_proxy_url: 'https://dp.example.invalid/base/\nhttps://second.example.invalid' });
    expect(downloadPlan('p', dp, '/a/v.mp4', settings()).downProxy).toBe('https://dp.example.invalid/base');
    expect(downloadPlan('p', dp, '/a/v.mp4', settings(), { direct: true }).downProxy).toBeUndefined();
    expect(downProxyUrl('https://dp.example.invalid/base', '/a b/v.mp4', 'SIG')).toBe('https://dp.example.invalid/base/a%20b/v.mp4?sign=SIG');
  });

  it('/ap as /p without the down-proxy; raw_url: the down-proxy or /p where the storage proxies', () => {
    expect(downloadPlan('ap', storage(), 'e.bin', settings()).refused).toBe(true);
    expect(downloadPlan('ap', storage({ down_proxy_url: 'https://dp.example.invalid' }, true), 'e.bin', settings())).toEqual({ refused: false, proxied: true });
    expect(downloadPlan('raw_url', storage(), '/a/v.mp4', settings())).toEqual({ refused: false, proxied: false, downProxy: undefined });
    expect(downloadPlan('raw_url', storage({ web_proxy: true, down_proxy_url: 'https://dp.example.invalid' }), '/a/v.mp4', settings()).downProxy).toBe('https://dp.example.invalid');
  });

  it('shares redirect unless share_force_proxy or the storage proxies; WebDAV follows webdav_policy', () => {
    expect(redirectOf(downloadPlan('share', storage(), '/a/v.mp4', settings()), url)).toBe(url.url);
    expect(redirectOf(downloadPlan('share', storage(), '/a/v.mp4', settings()), { ...url, file: {} as never })).toBeUndefined();
    expect(redirectOf(downloadPlan('share', storage(), '/a/v.mp4', settings({ share_force_proxy: 'true' })), url)).toBeUndefined();
    expect(redirectOf(downloadPlan('webdav', storage({ webdav_policy: '302_redirect' }), '/a/v.mp4', settings()), url)).toBe(url.url);
    expect(redirectOf(downloadPlan('webdav', storage({ webdav_policy: 'native_proxy' }), '/a/v.mp4', settings()), url)).toBeUndefined();
    expect(downloadPlan('webdav', storage({ webdav_policy: 'use_proxy_url', down_proxy_url: 'https://dp.example.invalid' }), '/a/v.mp4', settings()).downProxy).toBe('https://dp.example.invalid');
    expect(downloadPlan('webdav', storage({ down_proxy_url: 'https://dp.example.invalid' }), '/a/v.mp4', settings()).downProxy).toBeUndefined();
  });
});
