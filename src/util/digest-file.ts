import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/**
 * The hex digest (`md5`, `sha1`, `sha256`) of a file of this machine's disk, read in 1 MiB
 * pieces: the reads wait off the event loop, each piece's hashing takes a few milliseconds on it.
 */
export async function digestFile(file: string, algo: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash(algo);
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20, signal })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
