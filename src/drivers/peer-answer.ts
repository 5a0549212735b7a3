// Bounded reading of what another server answers: a storage never holds more of a peer's answer
// in memory than a set number of bytes, nor parses JSON nested deeper than a set number of levels.
// A hostile or broken peer (an endless body, a body much larger than its Content-Length said,
// `[[[[…` a million levels deep) fails the one call with a typed error instead of filling memory.

import { Upstream } from '../errors.js';

/**
 * Most bytes of one JSON answer of a peer (16 MiB). A listing entry of this API takes about
 * 300 bytes, so a folder of some 50 000 entries fits in one answer.
 */
export const MAX_PEER_JSON_BYTES = 16 * 1024 * 1024;

/**
 * Deepest nesting of `{`/`[` in one JSON answer of a peer. The deepest answer of this API is an
 * archive tree (`/api/fs/archive/meta`), two levels per inner folder: a tree as deep as the
 * 256 path segments a path may have nests about 520 levels.
 */
export const MAX_PEER_JSON_DEPTH = 1024;

/** A peer's answer over one of the bounds above (kind Upstream: 500 on the API, as other failures of a peer). */
export class PeerAnswerTooLarge extends Upstream {}

/**
 * The whole body, read until it ends or passes `max` bytes: then the stream is given up (the
 * connection closed, nothing more read) and PeerAnswerTooLarge names `what`. A declared
 * `Content-Length` over `max` fails before anything is read.
 */
export async function readBounded(body: AsyncIterable<Uint8Array> | null | undefined, what: string, declared?: string | number | null, max = MAX_PEER_JSON_BYTES): Promise<Buffer> {
  const tooLarge = () => new PeerAnswerTooLarge(`${what} answered more than ${max} bytes`);
  const length = declared == null || declared === '' ? NaN : Number(declared);
  if (Number.isFinite(length) && length > max) {
    await cancel(body);
    throw tooLarge();
  }
  if (!body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let n = 0;
  // Leaving the loop early (the throw) cancels a web stream and destroys a Node one.
  for await (const c of body) {
    n += c.byteLength;
    if (n > max) throw tooLarge();
    chunks.push(c);
  }
  return Buffer.concat(chunks, n);
}

async function cancel(body: AsyncIterable<Uint8Array> | null | undefined): Promise<void> {
  if (!body) return;
  const b = body as { cancel?: () => Promise<void>; destroy?: () => void };
  if (typeof b.cancel === 'function') await b.cancel().catch(() => undefined);
  else b.destroy?.();
}

/**
 * True when no `{`/`[` nests deeper than `max`. Scans the UTF-8 bytes: the six bytes looked at
 * are ASCII and never part of a multi-byte character, and brackets inside strings are skipped.
 */
export function jsonDepthWithin(bytes: Uint8Array, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c === 0x22) {
      // A string: up to its closing quote, stepping over every escaped character.
      for (i++; i < bytes.length; i++) {
        const s = bytes[i]!;
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return false;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return true;
}

/**
 * A peer's JSON answer read within both bounds. Undefined when the body is not JSON (the caller
 * says what it expected); PeerAnswerTooLarge when it is too big or too deep.
 */
export async function readPeerJson(body: AsyncIterable<Uint8Array> | null | undefined, what: string, declared?: string | number | null): Promise<unknown> {
  const bytes = await readBounded(body, what, declared);
  if (!jsonDepthWithin(bytes, MAX_PEER_JSON_DEPTH)) throw new PeerAnswerTooLarge(`${what} answered JSON nested deeper than ${MAX_PEER_JSON_DEPTH} levels`);
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
