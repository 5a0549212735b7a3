import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { localStorage, makeTree } from '../helpers/files.js';
import type { TestServer } from '../helpers/server.js';

/**
 * The conformance suite starts its own server and mounts only the driver under test. Overlay
 * drivers (Alias, Chunk, Crypt, Strm) need the storages they overlay mounted in that same server:
 * test files wrap startServer with `withStartHook` (vi.mock, see alias.test.ts), which runs the
 * hook a setup armed, once.
 */
let pending: ((s: TestServer) => Promise<void>) | undefined;

export function afterNextServerStart(hook: (s: TestServer) => Promise<void>): void {
  pending = hook;
}

export async function runAfterStart(s: TestServer): Promise<void> {
  const hook = pending;
  pending = undefined;
  await hook?.(s);
}

type ServerModule = typeof import('../helpers/server.js');

/** test/helpers/server.js with a startServer that runs the armed hook on each server it starts. */
export function withStartHook(mod: ServerModule): ServerModule {
  return {
    ...mod,
    startServer: async (...args: Parameters<ServerModule['startServer']>) => {
      const s = await mod.startServer(...args);
      await runAfterStart(s);
      return s;
    },
  };
}

/** Arms the hook to mount Local storages (mount path → host folder) in the next server. */
export function mountLocalsOnNextStart(locals: Record<string, string>): void {
  afterNextServerStart(async (s) => {
    const token = await s.login();
    for (const [mp, root] of Object.entries(locals)) {
      const r = await s.api('POST', '/api/admin/storage/create', { token, body: localStorage(mp, root) });
      expect(r.code, r.message).toBe(200);
    }
  });
}

/** A fresh host folder `base` holding outside-marker.txt beside `served` (base/root), which the next server mounts as a Local storage at `mountPath`. */
export function localOnNextStart(label: string, mountPath: string): { base: string; served: string } {
  const base = mkdtempSync(path.join(os.tmpdir(), `atrium-conf-${label}-`));
  const served = path.join(makeTree({ 'outside-marker.txt': 'outside', 'root/': '' }, base), 'root');
  mountLocalsOnNextStart({ [mountPath]: served });
  return { base, served };
}
