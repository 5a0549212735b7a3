import path from 'node:path';
import { PeerArchives } from '../alist-v3/archive.js';
import { AlistV3Driver } from '../alist-v3/index.js';
import {
  type ArchiveDecompressArgs,
  type ArchiveObj,
  defineDriver,
  type DriverArchiveMeta,
  type Link,
  type LinkArgs,
} from '../types.js';
import { ADDITIONAL, CONFIG } from './info.js';

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/**
 * OpenList's "OpenList" driver, the AList V3 driver's successor: the same calls of another
 * server of this API, and when a link is asked for, the client's address and user agent passed
 * on (X-Forwarded-For / X-Real-Ip, User-Agent), so a peer that signs links per client or
 * redirects to a cloud that checks them gives a link that works for that client. With
 * `pass_refresh_flag_to_upsteam`, a client's refresh of a listing is a refresh on the peer too.
 *
 * With `forward_archive_requests` (the default) archives are browsed, read and extracted by the
 * peer (`/api/fs/archive/*` and its `/ae` entry links), so opening an archive never downloads it;
 * off, this server reads the archive itself through the file's link.
 */
export class OpenListDriver extends AlistV3Driver {
  private readonly archives: PeerArchives;

  constructor(
    private readonly flags: Record<string, unknown>,
    ctx: ConstructorParameters<typeof AlistV3Driver>[1],
  ) {
    super(flags, ctx);
    this.archives = new PeerArchives(<T>(route: string, body: unknown) => this.call<T>(route, body), this.base);
  }

  protected override get passRefresh(): boolean {
    return this.flags.pass_refresh_flag_to_upsteam === true;
  }

  private get forward(): boolean {
    return this.flags.forward_archive_requests === true;
  }

  async archiveMeta(p: string, archivePass: string): Promise<DriverArchiveMeta | undefined> {
    return this.forward ? this.archives.meta(this.remote(p), this.metaPassword, archivePass) : undefined;
  }

  async archiveList(p: string, inner: string, archivePass: string): Promise<ArchiveObj[] | undefined> {
    return this.forward ? this.archives.list(this.remote(p), this.metaPassword, inner, archivePass) : undefined;
  }

  async archiveLink(p: string, inner: string, archivePass: string): Promise<Link | undefined> {
    return this.forward ? this.archives.link(this.remote(p), this.metaPassword, inner, archivePass) : undefined;
  }

  async archiveDecompress(src: string, dstDir: string, args: ArchiveDecompressArgs): Promise<boolean> {
    if (!this.forward) return false;
    const remoteSrc = this.remote(src);
    await this.archives.decompress(path.posix.dirname(remoteSrc), path.posix.basename(remoteSrc), this.remote(dstDir), {
      password: this.metaPassword,
      archivePass: args.password,
      inner: args.inner,
      putIntoNewDir: args.putIntoNewDir,
      overwrite: args.overwrite,
    });
    return true;
  }

  protected override clientHeaders(args: LinkArgs): Record<string, string> {
    const h: Record<string, string> = {};
    if (this.flags.pass_ip_to_upsteam && args.ip) {
      h['x-forwarded-for'] = args.ip;
      h['x-real-ip'] = args.ip;
    }
    const ua = first(args.header?.['user-agent']);
    if (this.flags.pass_ua_to_upsteam && ua) h['user-agent'] = ua;
    return h;
  }
}

export const openListDriver = defineDriver(CONFIG, ADDITIONAL, (options, ctx) => new OpenListDriver(options, ctx));
