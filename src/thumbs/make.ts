import { Readable } from 'node:stream';
import type { Sharp } from 'sharp';
import { Unsupported } from '../errors.js';
import { readWhole, type RangeServer, type Source } from './source.js';
import { runTool } from './tools.js';

/** What a thumbnail is made of: the kinds of file this module reads. */
export type ThumbKind = 'image' | 'video' | 'audio' | 'pdf';

export interface MakeLimits {
  /** Longest side of the thumbnail, in pixels. */
  size: number;
  /** Files decoded whole (images, PDFs) larger than this are refused. */
  maxSourceBytes: number;
  /** Images with more pixels than this are refused before decoding (sharp's limitInputPixels). */
  maxPixels: number;
  /** Milliseconds a thumbnail may take. */
  timeoutMs: number;
  /** A video's frame: seconds from the start, or a percentage of the duration (`20%`). */
  videoPosition: string;
  signal?: AbortSignal;
}

/** The thumbnails' format: WebP keeps transparency and is small. */
export const THUMB_TYPE = 'image/webp';
const MAX_FRAME_BYTES = 64 * 1024 * 1024;

type SharpModule = typeof import('sharp');
let sharpModule: Promise<SharpModule> | undefined;
const loadSharp = async () => (await (sharpModule ??= import('sharp'))).default;

/** The image formats sharp's libvips decodes here (HEIC only where its libheif has the codec). */
export async function imageFormats(): Promise<Set<string>> {
  const sharp = await loadSharp();
  const exts = new Set(['jpg', 'jpeg', 'jpe', 'jfif', 'png', 'webp', 'gif', 'tif', 'tiff']);
  // libvips reads AVIF and HEIC through libheif; HEIC only where that carries an HEVC decoder
  // (sharp's prebuilt one does not): the suffixes it declares say which.
  const heif = sharp.format.heif as { input?: { buffer?: boolean; fileSuffix?: string[] } } | undefined;
  if (heif?.input?.buffer) for (const suffix of heif.input.fileSuffix ?? []) exts.add(suffix.replace(/^\./, '').toLowerCase());
  if (exts.has('heic')) exts.add('heif');
  return exts;
}

/** The thumbnail (WebP, longest side at most `size`) of a still image, a frame, a page or a cover. */
async function encode(input: Buffer | string, lim: MakeLimits, autoOrient: boolean): Promise<Buffer> {
  const sharp = await loadSharp();
  let img: Sharp = sharp(input, { failOn: 'none', animated: false, limitInputPixels: lim.maxPixels, sequentialRead: true });
  if (autoOrient) img = img.rotate();
  return img
    .resize({ width: lim.size, height: lim.size, fit: 'inside', withoutEnlargement: true, fastShrinkOnLoad: true })
    .webp({ quality: 78, effort: 1 })
    .timeout({ seconds: Math.max(1, Math.ceil(lim.timeoutMs / 1000)) })
    .toBuffer();
}

/** An image: a local file is read in place; any other is read whole (within the source limit). */
async function fromImage(src: Source, lim: MakeLimits): Promise<Buffer> {
  const input = src.path ?? (await readWhole(src, lim.maxSourceBytes, lim.signal));
  return encode(input, lim, true);
}

/** The seconds into a video at `position` (a percentage needs its duration: ffprobe reads the index only). */
async function seekOf(url: string, lim: MakeLimits, deadline: number): Promise<number> {
  if (!lim.videoPosition.endsWith('%')) return Number.parseFloat(lim.videoPosition) || 0;
  const out = await runTool('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', url], {
    timeoutMs: Math.max(1000, deadline - Date.now()),
    maxOutput: 1 << 16,
    signal: lim.signal,
  });
  const duration = Number.parseFloat(out.toString('utf8').trim());
  return Number.isFinite(duration) ? (duration * Number.parseFloat(lim.videoPosition)) / 100 : 0;
}

/** A scale filter to fit the longest side in `size` without enlarging. */
const fitFilter = (size: number) => `scale='if(gte(iw,ih),min(${size},iw),-2)':'if(gte(iw,ih),-2,min(${size},ih))'`;

/** ffmpeg's input: the local file, or the source served by ranges on loopback. */
async function ffmpegInput(src: Source, ranges: RangeServer, signal?: AbortSignal): Promise<{ input: string; release: () => void }> {
  if (src.path) return { input: src.path, release: () => {} };
  const { url, release } = await ranges.expose(src, signal);
  return { input: url, release };
}

/** A video's frame at the storage's position (ffmpeg seeks by ranges: the index and one frame are read). */
async function fromVideo(src: Source, lim: MakeLimits, ranges: RangeServer): Promise<Buffer> {
  const deadline = Date.now() + lim.timeoutMs;
  const { input, release } = await ffmpegInput(src, ranges, lim.signal);
  try {
    const seek = await seekOf(input, lim, deadline);
    const grab = (at: number) =>
      runTool(
        'ffmpeg',
        ['-nostdin', '-v', 'error', '-ss', at.toFixed(3), '-i', input, '-map', '0:v:0', '-frames:v', '1', '-vf', fitFilter(lim.size), '-f', 'image2pipe', '-vcodec', 'png', 'pipe:1'],
        { timeoutMs: Math.max(1000, deadline - Date.now()), maxOutput: MAX_FRAME_BYTES, signal: lim.signal },
      );
    let frame = await grab(seek);
    // Past the last frame (a position beyond a short video) ffmpeg gives nothing: take the first.
    if (frame.length === 0 && seek > 0) frame = await grab(0);
    if (frame.length === 0) throw new Unsupported('the video has no frame to show');
    return encode(frame, lim, false);
  } finally {
    release();
  }
}

/** An audio file's embedded cover picture (ID3 APIC, FLAC picture, MP4 covr): ffmpeg reads it as a video stream. */
async function fromAudio(src: Source, lim: MakeLimits, ranges: RangeServer): Promise<Buffer> {
  const { input, release } = await ffmpegInput(src, ranges, lim.signal);
  try {
    const cover = await runTool(
      'ffmpeg',
      ['-nostdin', '-v', 'error', '-i', input, '-map', '0:v:0', '-frames:v', '1', '-vf', fitFilter(lim.size), '-f', 'image2pipe', '-vcodec', 'png', 'pipe:1'],
      { timeoutMs: lim.timeoutMs, maxOutput: MAX_FRAME_BYTES, signal: lim.signal },
    ).catch(() => Buffer.alloc(0));
    if (cover.length === 0) throw new Unsupported('the audio file has no cover picture');
    return encode(cover, lim, false);
  } finally {
    release();
  }
}

/** A PDF's first page (pdftoppm; a PDF needs random access, so it is read whole within the source limit). */
async function fromPdf(src: Source, lim: MakeLimits): Promise<Buffer> {
  const args = ['-f', '1', '-l', '1', '-singlefile', '-png', '-scale-to', String(lim.size)];
  const opts = { timeoutMs: lim.timeoutMs, maxOutput: MAX_FRAME_BYTES, signal: lim.signal };
  const page = src.path
    ? await runTool('pdftoppm', [...args, src.path], opts)
    : await runTool('pdftoppm', [...args, '-'], { ...opts, stdin: Readable.from([await readWhole(src, lim.maxSourceBytes, lim.signal)]) });
  if (page.length === 0) throw new Unsupported('the PDF has no page to show');
  return encode(page, lim, false);
}

/** The thumbnail of `src` as a file of `kind`, within the limits. */
export function makeThumb(kind: ThumbKind, src: Source, lim: MakeLimits, ranges: RangeServer): Promise<Buffer> {
  switch (kind) {
    case 'image':
      return fromImage(src, lim);
    case 'video':
      return fromVideo(src, lim, ranges);
    case 'audio':
      return fromAudio(src, lim, ranges);
    case 'pdf':
      return fromPdf(src, lim);
  }
}
