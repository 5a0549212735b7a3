/** Polls `cond` every `everyMs` until it holds, failing after `ms`. */
export async function waitUntil(cond: () => boolean, ms = 5000, everyMs = 50): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Polls `what` every `everyMs` until it gives a value (anything but undefined or false) and
 * returns that value, failing after `ms`.
 */
export async function waitFor<T>(what: () => T | undefined | false | Promise<T | undefined | false>, ms: number, everyMs = 50): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
