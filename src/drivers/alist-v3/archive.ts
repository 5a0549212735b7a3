import { encodePath } from '../../util/encode-path.js';
import type { ArchiveObj, DriverArchiveMeta } from '../types.js';

/** An inner entry as a peer of this API answers it (`content` of /api/fs/archive/meta and /list). */
interface PeerArchiveObj {
  name: string;
  size: number;
  is_dir: boolean;
  modified: string;
  children?: PeerArchiveObj[] | null;
}

interface PeerArchiveMeta {
  comment: string;
  encrypted: boolean;
  content: PeerArchiveObj[] | null;
  raw_url: string;
  sign: string;
}

function toArchiveObj(o: PeerArchiveObj): ArchiveObj {
  const modified = new Date(o.modified);
  const obj: ArchiveObj = { name: o.name, size: o.size, isDir: o.is_dir, modified: Number.isNaN(modified.getTime()) ? new Date(0) : modified };
  if (o.children) obj.children = o.children.map(toArchiveObj);
  return obj;
}

/** One call of the peer's API (the driver's own, with its token renewal and error mapping). */
export type PeerCall = <T>(route: string, body: unknown) => Promise<T>;

/**
 * OpenList's archive calls of a peer of this API (`/api/fs/archive/meta|list|decompress`), for the
 * OpenList and OpenListShare drivers: the peer reads the archive where it lies and answers the
 * inner tree, one inner folder, or a link that extracts one entry. `password` is the folder
 * password (OpenList) or share code (OpenListShare) the path needs; `archivePass` the archive's.
 * A wrong archive password comes back as code 202 and is raised by the driver's call as such.
 */
export class PeerArchives {
  constructor(
    private readonly call: PeerCall,
    private readonly base: string,
  ) {}

  private metaOf(path: string, password: string, archivePass: string): Promise<PeerArchiveMeta> {
    return this.call<PeerArchiveMeta>('/api/fs/archive/meta', { path, password, archive_pass: archivePass, refresh: false });
  }

  async meta(path: string, password: string, archivePass: string): Promise<DriverArchiveMeta> {
    const m = await this.metaOf(path, password, archivePass);
    return { comment: m.comment ?? '', encrypted: Boolean(m.encrypted), tree: m.content ? m.content.map(toArchiveObj) : null };
  }

  async list(path: string, password: string, inner: string, archivePass: string): Promise<ArchiveObj[]> {
    const data = await this.call<{ content: PeerArchiveObj[] | null }>('/api/fs/archive/list', {
      path,
      password,
      archive_pass: archivePass,
      inner_path: inner,
      page: 1,
      per_page: 0,
      refresh: false,
    });
    return (data.content ?? []).map(toArchiveObj);
  }

  /** The peer's entry link: its archive raw URL (`/ae/…`) with the inner path, archive password and sign. */
  async link(path: string, password: string, inner: string, archivePass: string): Promise<{ url: string }> {
    const m = await this.metaOf(path, password, archivePass);
    if (!m.raw_url) throw new Error(`${this.base} gave no raw URL for the archive`);
    const raw = m.raw_url.startsWith('/') ? `${this.base}${m.raw_url}` : m.raw_url;
    const sep = raw.includes('?') ? '&' : '?';
    return { url: `${raw}${sep}inner=${encodePath(inner)}&pass=${encodeURIComponent(archivePass)}&sign=${encodeURIComponent(m.sign ?? '')}` };
  }

  /** Queues the extraction on the peer (its own task there); the archive and target are peer paths. */
  async decompress(srcDir: string, name: string, dstDir: string, args: { password: string; archivePass: string; inner: string; putIntoNewDir: boolean; overwrite: boolean }): Promise<void> {
    await this.call('/api/fs/archive/decompress', {
      src_dir: srcDir,
      name: [name],
      dst_dir: dstDir,
      archive_pass: args.archivePass,
      password: args.password,
      inner_path: args.inner,
      put_into_new_dir: args.putIntoNewDir,
      overwrite: args.overwrite,
      cache_full: false,
    });
  }
}
