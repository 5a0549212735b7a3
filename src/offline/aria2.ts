import type { Settings } from '../settings/service.js';
import { toolFetch } from './rpc-http.js';
import { type OfflineTool, type ToolStatus, UnknownDownload } from './tool.js';

interface Aria2Status {
  gid: string;
  status: 'active' | 'waiting' | 'paused' | 'error' | 'complete' | 'removed';
  totalLength: string;
  completedLength: string;
  errorMessage?: string;
  followedBy?: string[];
}

/** aria2 through its JSON-RPC interface (settings `aria2_uri`, `aria2_secret`). */
export class Aria2Tool implements OfflineTool {
  readonly name = 'aria2';
  readonly settingKeys = ['aria2_uri', 'aria2_secret'] as const;
  private settings?: Settings;

  private async call<T>(method: string, params: unknown[] = [], signal?: AbortSignal): Promise<T> {
    if (!this.settings) throw new Error('aria2 is not initialised');
    const uri = this.settings.get('aria2_uri');
    const secret = this.settings.get('aria2_secret');
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'atrium', method, params: secret ? [`token:${secret}`, ...params] : params });
    const res = await toolFetch(this.name, uri, { headers: { 'content-type': 'application/json' }, body, signal });
    const text = await res.text();
    let reply: { result?: T; error?: { code: number; message: string } };
    try {
      reply = JSON.parse(text);
    } catch {
      throw new Error(`aria2 at ${uri} answered HTTP ${res.status} with something that is not JSON-RPC`);
    }
    if (reply.error) {
      const gid = /^GID ([0-9a-f]+) is not found/i.exec(reply.error.message);
      if (gid) throw new UnknownDownload(this.name, gid[1]!);
      throw new Error(`aria2: ${reply.error.message}`);
    }
    return reply.result as T;
  }

  async init(settings: Settings): Promise<string> {
    this.settings = settings;
    const v = await this.call<{ version: string }>('aria2.getVersion');
    return v.version;
  }

  async add(url: string, dir: string, signal: AbortSignal): Promise<string> {
    return this.call<string>('aria2.addUri', [[url], { dir }], signal);
  }

  async status(handle: string): Promise<ToolStatus> {
    let s = await this.call<Aria2Status>('aria2.tellStatus', [handle]);
    // A .torrent or metalink URL first downloads the description, then the content under a new gid.
    for (let hops = 0; s.status === 'complete' && s.followedBy?.length && hops < 5; hops++) {
      s = await this.call<Aria2Status>('aria2.tellStatus', [s.followedBy[0]]);
    }
    const total = Number(s.totalLength);
    const done = Number(s.completedLength);
    return {
      progress: total > 0 ? (done / total) * 100 : 0,
      totalBytes: total,
      completed: s.status === 'complete',
      error: s.status === 'error' ? s.errorMessage || 'download failed' : s.status === 'removed' ? 'the download was removed from aria2' : undefined,
      status: s.status,
    };
  }

  async remove(handle: string): Promise<void> {
    const gids = [handle];
    try {
      const s = await this.call<Aria2Status>('aria2.tellStatus', [handle]);
      gids.push(...(s.followedBy ?? []));
    } catch (err) {
      if (err instanceof UnknownDownload) return;
      throw err;
    }
    for (const gid of gids) {
      for (const method of ['aria2.forceRemove', 'aria2.removeDownloadResult']) {
        await this.call(method, [gid]).catch((err) => {
          if (!(err instanceof UnknownDownload) && !/cannot be removed|not found/i.test((err as Error).message)) throw err;
        });
      }
    }
  }
}
