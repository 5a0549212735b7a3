/**
 * OpenList's offline-download tools that work through a cloud drive's own downloader (the file is
 * fetched by the cloud into a temp folder of a storage of that driver, then moved). Each is set up
 * by its `set_*` route with OpenList's setting keys; Atrium has none of these drivers, so each is
 * kept here with the reason it cannot run, and no path ever offers it.
 */
export interface CloudTool {
  /** OpenList's tool name (the `tool` of `/api/fs/add_offline_download`). */
  name: string;
  /** The `/api/admin/setting/<route>` that configures it. */
  route: string;
  /** The setting holding the temp folder (a path on a storage of the tool's driver). */
  tempDirKey: string;
  /** Other request fields → setting keys. */
  extra?: Record<string, string>;
}

export const CLOUD_TOOLS: readonly CloudTool[] = [
  { name: '115 Cloud', route: 'set_115', tempDirKey: '115_temp_dir' },
  { name: '115 Open', route: 'set_115_open', tempDirKey: '115_open_temp_dir' },
  { name: '123Pan', route: 'set_123_pan', tempDirKey: '123_temp_dir' },
  { name: '123 Open', route: 'set_123_open', tempDirKey: '123_open_temp_dir', extra: { callback_url: '123_open_callback_url' } },
  { name: 'PikPak', route: 'set_pikpak', tempDirKey: 'pikpak_temp_dir' },
  { name: 'Thunder', route: 'set_thunder', tempDirKey: 'thunder_temp_dir' },
  { name: 'ThunderX', route: 'set_thunderx', tempDirKey: 'thunderx_temp_dir' },
  { name: 'ThunderBrowser', route: 'set_thunder_browser', tempDirKey: 'thunder_browser_temp_dir' },
  { name: 'GuangYaPan', route: 'set_guangyapan', tempDirKey: 'guangyapan_temp_dir' },
];

/** Why a cloud tool cannot run here. */
export const cloudToolReason = (t: CloudTool): string => `Atrium has no ${t.name} storage driver, which this tool downloads through`;

export const cloudTool = (name: string): CloudTool | undefined => CLOUD_TOOLS.find((t) => t.name.toLowerCase() === name.toLowerCase());
