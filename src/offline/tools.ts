import { Aria2Tool } from './aria2.js';
import { QBittorrentTool } from './qbittorrent.js';
import type { OfflineOptions } from './service.js';
import { OfflineTools } from './tool.js';
import { TransmissionTool } from './transmission.js';

/** The external tools a server can drive (SimpleHttp is built into the offline service). */
export function createOfflineTools(opts: OfflineOptions = {}): OfflineTools {
  const tools = new OfflineTools();
  tools.register(new Aria2Tool());
  tools.register(new QBittorrentTool(opts.qbittorrentAppearMs));
  tools.register(new TransmissionTool());
  return tools;
}
