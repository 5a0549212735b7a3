import { Readable } from 'node:stream';
import type { LinkFetcher, LinkTarget } from '../net/link-fetch.js';

/**
 * Bytes start..end (inclusive) of a link's URL: asks for the range and, when the peer ignores
 * Range and sends the whole body, skips to the start and stops after the end.
 */
export async function openUrlRange(fetcher: LinkFetcher, link: LinkTarget, start: number, end: number): Promise<Readable> {
  const res = await fetcher.open(link, { headers: { range: `bytes=${start}-${end}`, 'accept-encoding': 'identity' } });
  if (res.statusCode !== 206 && res.statusCode !== 200) {
    res.resume();
    throw new Error(`reading ${new URL(link.url!).pathname} failed: HTTP ${res.statusCode}`);
  }
  if (res.statusCode === 206) return res;
  return Readable.from(sliceBytes(res, start, end));
}

/** Passes on bytes start..end (inclusive) of what flows through it. */
async function* sliceBytes(source: AsyncIterable<Buffer>, start: number, end: number): AsyncGenerator<Buffer> {
  let pos = 0;
  for await (const chunk of source) {
    const from = Math.max(0, start - pos);
    const to = Math.min(chunk.length, end + 1 - pos);
    pos += chunk.length;
    if (to > from) yield chunk.subarray(from, to);
    if (pos > end) return;
  }
}
