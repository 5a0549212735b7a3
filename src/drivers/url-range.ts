import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';

/**
 * Bytes start..end (inclusive) of a URL: asks for the range and, when the peer ignores Range
 * and sends the whole body, skips to the start and stops after the end.
 */
export async function openUrlRange(url: string, header: Record<string, string> | undefined, start: number, end: number): Promise<Readable> {
  const res = await fetch(url, { headers: { ...header, range: `bytes=${start}-${end}`, 'accept-encoding': 'identity' }, redirect: 'follow' });
  if (res.status !== 206 && res.status !== 200) {
    await res.body?.cancel();
    throw new Error(`reading ${new URL(url).pathname} failed: HTTP ${res.status}`);
  }
  if (!res.body) return Readable.from([]);
  const body = Readable.fromWeb(res.body as ReadableStream);
  if (res.status === 206) return body;
  return Readable.from(sliceBytes(body, start, end));
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
