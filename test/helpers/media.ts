// Small media files for the player and preview tests.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A WAV file of `seconds` of silence (16-bit mono, 8 kHz). */
export function wav(seconds: number): Buffer {
  const data = Buffer.alloc(8000 * 2 * seconds);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(8000, 24);
  h.writeUInt32LE(16000, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

/** A 2-second 160×120 VP8 test-pattern clip (WebM), made by ffmpeg. */
export function webmClip(): Buffer {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'atrium-clip-'));
  try {
    const clip = path.join(scratch, 'clip.webm');
    execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=duration=2:size=160x120:rate=10', '-c:v', 'libvpx', '-b:v', '100k', clip]);
    return readFileSync(clip);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
