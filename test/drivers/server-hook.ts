import type { TestServer } from '../helpers/server.js';

/**
 * The conformance suite starts its own server and mounts only the driver under test. Overlay
 * drivers (Alias, Crypt) need the storages they overlay mounted in that same server: test files
 * wrap startServer (vi.mock, see alias.test.ts) and call `runAfterStart`, which runs the hook
 * a setup armed, once.
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
