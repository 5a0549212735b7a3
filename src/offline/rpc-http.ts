/** How long one call to a download tool's API may take. */
const CALL_TIMEOUT_MS = 15_000;

export interface ToolRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | URLSearchParams;
  signal?: AbortSignal;
}

/**
 * fetch with a timeout, for the tools' HTTP APIs; a connection failure becomes
 * `failed to connect to <tool> at <url>: <cause>` (the cause's code, e.g. ECONNREFUSED).
 */
export async function toolFetch(tool: string, url: string, req: ToolRequest = {}): Promise<Response> {
  const timeout = AbortSignal.timeout(CALL_TIMEOUT_MS);
  const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
  try {
    return await fetch(url, { method: req.method ?? 'POST', headers: req.headers, body: req.body, signal, redirect: 'manual' });
  } catch (err) {
    if (req.signal?.aborted) throw err;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = timeout.aborted ? `no answer within ${CALL_TIMEOUT_MS / 1000} s` : (cause?.code ?? cause?.message ?? (err as Error).message);
    throw new Error(`failed to connect to ${tool} at ${redact(url)}: ${why}`);
  }
}

/** A URL without the credentials it may carry (qBittorrent's and Transmission's settings hold them). */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url;
  }
}

/** Splits `http://user:pass@host/path` into the URL without credentials and Basic credentials. */
export function credentialsOf(url: string): { url: string; username: string; password: string } {
  const u = new URL(url);
  const username = decodeURIComponent(u.username);
  const password = decodeURIComponent(u.password);
  u.username = '';
  u.password = '';
  return { url: u.toString(), username, password };
}
