import type { Settings } from '../settings/service.js';
import { credentialsOf, redact, toolFetch } from './rpc-http.js';
import { type OfflineTool, type ToolStatus, UnknownDownload } from './tool.js';

interface TorrentFields {
  hashString: string;
  name: string;
  status: number;
  percentDone: number;
  sizeWhenDone: number;
  leftUntilDone: number;
  /** 0 none, 1 tracker warning, 2 tracker error, 3 local error. */
  error: number;
  errorString: string;
}

/** `status` numbers of the RPC (spec §3.3). */
const STATUS_WORDS = ['stopped', 'check pending', 'checking', 'download pending', 'downloading', 'seed pending', 'seeding'];
const SEEDING = new Set([5, 6]);
const CHECKING = new Set([1, 2]);
const LOCAL_ERROR = 3;
const SESSION_HEADER = 'x-transmission-session-id';

/**
 * Transmission through its JSON RPC (setting `transmission_uri`, credentials in the URL). The
 * handle of a download is the torrent's info hash, which survives restarts of either side.
 */
export class TransmissionTool implements OfflineTool {
  readonly name = 'Transmission';
  readonly settingKeys = ['transmission_uri', 'transmission_seedtime'] as const;
  private settings?: Settings;
  /** The CSRF token the daemon hands out with a 409 answer. */
  private sessionId = '';

  private async rpc<T>(method: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
    if (!this.settings) throw new Error('Transmission is not initialised');
    const raw = this.settings.get('transmission_uri');
    let endpoint;
    try {
      endpoint = credentialsOf(raw);
    } catch {
      throw new Error(`transmission_uri ${redact(raw)} is not a URL`);
    }
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (endpoint.username || endpoint.password) {
      headers.authorization = `Basic ${Buffer.from(`${endpoint.username}:${endpoint.password}`).toString('base64')}`;
    }
    const body = JSON.stringify({ method, arguments: args });
    for (let attempt = 0; ; attempt++) {
      const res = await toolFetch(this.name, endpoint.url, { headers: { ...headers, [SESSION_HEADER]: this.sessionId }, body, signal });
      if (res.status === 409 && attempt === 0) {
        await res.body?.cancel();
        this.sessionId = res.headers.get(SESSION_HEADER) ?? '';
        continue;
      }
      if (res.status === 401) throw new Error(`Transmission at ${endpoint.url} refused the credentials`);
      const text = await res.text();
      if (res.status !== 200) throw new Error(`Transmission ${method}: HTTP ${res.status}`);
      let reply: { result: string; arguments: T };
      try {
        reply = JSON.parse(text);
      } catch {
        throw new Error(`Transmission at ${endpoint.url} answered something that is not its RPC`);
      }
      if (reply.result !== 'success') throw new Error(`Transmission ${method}: ${reply.result}`);
      return reply.arguments;
    }
  }

  async init(settings: Settings): Promise<string> {
    this.settings = settings;
    const session = await this.rpc<{ version: string }>('session-get', { fields: ['version'] });
    return session.version;
  }

  async add(url: string, dir: string, signal: AbortSignal): Promise<string> {
    const r = await this.rpc<{ 'torrent-added'?: TorrentFields; 'torrent-duplicate'?: TorrentFields }>('torrent-add', { filename: url, 'download-dir': dir, paused: false }, signal);
    const t = r['torrent-added'] ?? r['torrent-duplicate'];
    if (!t) throw new Error(`Transmission did not take ${url}`);
    return t.hashString;
  }

  async status(handle: string): Promise<ToolStatus> {
    const r = await this.rpc<{ torrents: TorrentFields[] }>('torrent-get', {
      ids: [handle],
      fields: ['hashString', 'name', 'status', 'percentDone', 'sizeWhenDone', 'leftUntilDone', 'error', 'errorString'],
    });
    const t = r.torrents[0];
    if (!t) throw new UnknownDownload(this.name, handle);
    const word = STATUS_WORDS[t.status] ?? `status ${t.status}`;
    return {
      progress: t.percentDone * 100,
      totalBytes: t.sizeWhenDone,
      completed: t.leftUntilDone === 0 && t.percentDone >= 1 && t.sizeWhenDone > 0 && !CHECKING.has(t.status),
      // Tracker warnings and errors are shown, not fatal: web seeds and peers may still deliver.
      error: t.error === LOCAL_ERROR ? t.errorString || 'local error' : undefined,
      status: t.error && t.errorString ? `${word} (${t.errorString})` : word,
      seeding: SEEDING.has(t.status),
    };
  }

  async remove(handle: string): Promise<void> {
    await this.rpc('torrent-remove', { ids: [handle], 'delete-local-data': false });
  }
}
