import { randomUUID } from 'node:crypto';
import type { Settings } from '../settings/service.js';
import { credentialsOf, redact, toolFetch } from './rpc-http.js';
import { type OfflineTool, type ToolStatus, UnknownDownload } from './tool.js';

interface TorrentInfo {
  hash: string;
  name: string;
  state: string;
  /** 0–1. */
  progress: number;
  size: number;
  total_size: number;
  amount_left: number;
}

/** States of the Web API in which every wanted byte is on disk. */
const SEEDING = new Set(['uploading', 'stalledUP', 'forcedUP', 'queuedUP']);
const COMPLETE = new Set([...SEEDING, 'pausedUP', 'stoppedUP', 'checkingUP']);
const FAILED = new Set(['error', 'missingFiles']);
/** A torrent added from a URL is listed only once qBittorrent fetched its metadata file. */
const DEFAULT_APPEAR_MS = 60_000;

/**
 * qBittorrent through its Web API v2 (setting `qbittorrent_url`, credentials in the URL, as the
 * original). Each download is added with a tag of its own, which is the handle: the add call
 * answers no hash, and a URL's torrent appears only once qBittorrent has fetched it.
 */
export class QBittorrentTool implements OfflineTool {
  readonly name = 'qBittorrent';
  readonly settingKeys = ['qbittorrent_url', 'qbittorrent_seedtime'] as const;
  private settings?: Settings;
  private session?: { url: string; cookie: string };
  /** When each handle was added by this process (for the grace before "unknown"). */
  private readonly added = new Map<string, number>();

  /** `appearMs`: how long a torrent may take to be listed after it was added before the download fails. */
  constructor(private readonly appearMs = DEFAULT_APPEAR_MS) {}

  private endpoint(): { url: string; username: string; password: string } {
    if (!this.settings) throw new Error('qBittorrent is not initialised');
    const raw = this.settings.get('qbittorrent_url');
    let parsed;
    try {
      parsed = credentialsOf(raw);
    } catch {
      throw new Error(`qbittorrent_url ${redact(raw)} is not a URL`);
    }
    return { ...parsed, url: parsed.url.endsWith('/') ? parsed.url : `${parsed.url}/` };
  }

  private async login(signal?: AbortSignal): Promise<{ url: string; cookie: string }> {
    const { url, username, password } = this.endpoint();
    const res = await toolFetch(this.name, `${url}api/v2/auth/login`, {
      body: new URLSearchParams({ username, password }),
      signal,
    });
    const text = (await res.text()).trim();
    if (res.status === 403) throw new Error(`qBittorrent at ${url} refused the login (too many failures: the IP is banned for a while)`);
    if (res.status !== 200 || text !== 'Ok.') throw new Error(`qBittorrent at ${url} refused the login: ${text || `HTTP ${res.status}`}`);
    const cookie = /(?:^|[;,]\s*)SID=([^;]+)/.exec(res.headers.get('set-cookie') ?? '');
    if (!cookie) throw new Error(`qBittorrent at ${url} answered the login without a session cookie`);
    this.session = { url, cookie: `SID=${cookie[1]}` };
    return this.session;
  }

  /** A Web API call with the session cookie; a lost session (403) logs in again once. */
  private async call(route: string, form?: Record<string, string>, signal?: AbortSignal): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const session = this.session ?? (await this.login(signal));
      const res = await toolFetch(this.name, `${session.url}api/v2/${route}`, {
        method: form ? 'POST' : 'GET',
        headers: { cookie: session.cookie },
        body: form ? new URLSearchParams(form) : undefined,
        signal,
      });
      if (res.status === 403 && attempt === 0) {
        await res.body?.cancel();
        this.session = undefined;
        continue;
      }
      if (res.status !== 200) {
        const text = (await res.text()).trim();
        throw new Error(`qBittorrent ${route}: HTTP ${res.status}${text ? ` ${text}` : ''}`);
      }
      return res;
    }
  }

  async init(settings: Settings): Promise<string> {
    this.settings = settings;
    this.session = undefined;
    await this.login();
    return (await (await this.call('app/version')).text()).trim();
  }

  async add(url: string, dir: string, signal: AbortSignal): Promise<string> {
    const tag = `atrium-${randomUUID()}`;
    const res = await this.call('torrents/add', { urls: url, savepath: dir, tags: tag, autoTMM: 'false', root_folder: 'true' }, signal);
    const text = (await res.text()).trim();
    if (text !== 'Ok.') throw new Error(`qBittorrent did not take ${url}: ${text || 'no reason given'}`);
    this.added.set(tag, Date.now());
    return tag;
  }

  private async torrents(tag: string): Promise<TorrentInfo[]> {
    const res = await this.call(`torrents/info?tag=${encodeURIComponent(tag)}`);
    return (await res.json()) as TorrentInfo[];
  }

  async status(handle: string): Promise<ToolStatus> {
    const list = await this.torrents(handle);
    if (list.length === 0) {
      const since = this.added.get(handle);
      // Added before this process started: qBittorrent lost it, and it is added again.
      if (since === undefined) throw new UnknownDownload(this.name, handle);
      // qBittorrent reports no failure of fetching a torrent URL: it just never lists it.
      const error =
        Date.now() - since > this.appearMs
          ? `qBittorrent has not listed the torrent ${Math.round(this.appearMs / 1000)} s after it was added: the URL gives no torrent, or qBittorrent could not fetch it`
          : undefined;
      return { progress: 0, totalBytes: 0, completed: false, status: 'fetching the torrent', error };
    }
    const total = list.reduce((n, t) => n + t.size, 0);
    const left = list.reduce((n, t) => n + t.amount_left, 0);
    const failed = list.find((t) => FAILED.has(t.state));
    const completed = list.every((t) => COMPLETE.has(t.state) && t.amount_left === 0 && t.progress >= 1);
    return {
      progress: total > 0 ? ((total - left) / total) * 100 : 0,
      totalBytes: total,
      completed: completed && !failed,
      error: failed ? `torrent ${failed.name} is in state ${failed.state}` : undefined,
      status: list.map((t) => t.state).join(', '),
      seeding: list.some((t) => SEEDING.has(t.state)),
    };
  }

  async remove(handle: string): Promise<void> {
    this.added.delete(handle);
    const list = await this.torrents(handle);
    if (list.length > 0) await this.call('torrents/delete', { hashes: list.map((t) => t.hash).join('|'), deleteFiles: 'false' });
    await this.call('torrents/deleteTags', { tags: handle });
  }
}
