import type { Settings } from '../settings/service.js';

/**
 * An offline-download tool (wire-api.md §13.2): something that fetches URLs into a local
 * folder. SimpleHttp is run by Atrium itself; aria2, qBittorrent and Transmission are external
 * daemons driven through their RPC APIs. The download task (src/offline/service.ts) calls
 * `add` once, then `status` every few seconds until `completed` or an error, then `remove`.
 */
export interface OfflineTool {
  /** The exact `tool` string of the wire (`SimpleHttp`, `aria2`, `qBittorrent`, `Transmission`). */
  readonly name: string;
  /** Setting keys this tool reads (for `/api/public/offline_download_tools` and `set_*`). */
  readonly settingKeys: readonly string[];
  /**
   * Connects with the current settings and returns the tool's version text; throws with a clear
   * message (e.g. `failed to connect to aria2 at http://…: ECONNREFUSED`) when it can't.
   */
  init(settings: Settings): Promise<string>;
  /** Starts downloading `url` into `dir` (an existing, empty folder); returns the tool's handle (gid, hash, id). */
  add(url: string, dir: string, signal: AbortSignal): Promise<string>;
  /**
   * Where the download stands. Throws `UnknownDownload` when the tool has no such handle (after a
   * restart of Atrium or of the daemon: the task then calls `add` again with the same `dir`, and
   * the tool resumes from the partial files where it can); any other error is counted, and 5 in
   * a row fail the task.
   */
  status(handle: string): Promise<ToolStatus>;
  /** Stops and forgets the download; the tool's files in `dir` are left for the caller to handle. */
  remove(handle: string): Promise<void>;
}

export interface ToolStatus {
  /** 0–100. */
  progress: number;
  /** Bytes in all, when known (0 otherwise). */
  totalBytes: number;
  /** The download finished (every file is complete in `dir`). */
  completed: boolean;
  /** The tool reports the download failed (message as the tool words it); `completed` is then false. */
  error?: string;
  /** The tool's own state word (`active`, `downloading`, `seeding`…), shown as `[tool]: <status>`. */
  status: string;
  /** For torrents: seeding after completion; the task keeps the torrent for `*_seedtime` minutes. */
  seeding?: boolean;
}

export class UnknownDownload extends Error {
  constructor(tool: string, handle: string) {
    super(`${tool} does not know the download ${handle}`);
  }
}

/** The tools a server knows, by wire name; filled by src/offline/tools.ts. */
export class OfflineTools {
  private readonly tools = new Map<string, OfflineTool>();

  register(tool: OfflineTool): void {
    this.tools.set(tool.name, tool);
  }

  get(name: string): OfflineTool | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }
}
