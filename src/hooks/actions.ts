import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { LookupFunction } from 'node:net';
import type { OpEvent } from '../audit/events.js';
import type { HookAction } from '../db/hooks.js';
import { URL_FETCH_SETTING } from '../net/link-fetch.js';
import { resolveTarget } from '../net/url-guard.js';

export const SIGNATURE_HEADER = 'X-Atrium-Signature';
/** How much of a failing command's stderr (or a receiver's answer) is kept as the error. */
const ERROR_TAIL = 500;

/** `sha256=<hex HMAC-SHA256 of body with secret>`: the value of X-Atrium-Signature. */
export const signature = (secret: string, body: string): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

const tail = (s: string) => (s.length > ERROR_TAIL ? `…${s.slice(-ERROR_TAIL)}` : s);

export interface SendOptions {
  /** `url_fetch_allow_private` now. */
  allowPrivate: boolean;
  /** `hooks.allow_commands` in config.json. */
  allowCommands: boolean;
  httpTimeoutMs: number;
  commandTimeoutMs: number;
}

/** Delivers one event to one action; resolves when delivered, rejects with the reason otherwise. */
export async function deliver(action: HookAction, body: string, opts: SendOptions): Promise<void> {
  if (action.type === 'http') return postSigned(action.url, action.secret, body, opts);
  if (!opts.allowCommands) throw new Error('command actions are off (hooks.allow_commands is false in config.json)');
  return runCommand(action.command, body, opts.commandTimeoutMs);
}

/**
 * POSTs `body` to `url` with its signature. The host is resolved and checked by the address
 * guard now (a name may point somewhere else than when the hook was saved) and the connection
 * goes to the checked address. Any 2xx is success; redirects are not followed.
 */
async function postSigned(url: string, secret: string, body: string, opts: SendOptions): Promise<void> {
  const target = await resolveTarget(url, { allowPrivate: opts.allowPrivate, setting: URL_FETCH_SETTING });
  const { address, family } = target;
  const pinned: LookupFunction = (_host, o, cb) => {
    if (o.all) (cb as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: address!, family: family! }]);
    else cb(null, address!, family!);
  };
  const mod = target.url.protocol === 'https:' ? await import('node:https') : http;
  const payload = Buffer.from(body);
  await new Promise<void>((resolve, reject) => {
    const req = mod.request(target.url, {
      method: 'POST',
      agent: false,
      lookup: opts.allowPrivate ? undefined : pinned,
      headers: { 'content-type': 'application/json', 'content-length': String(payload.length), [SIGNATURE_HEADER.toLowerCase()]: signature(secret, body), 'user-agent': 'Atrium-Hooks' },
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer from ${target.url.host} within ${opts.httpTimeoutMs / 1000} s`)), opts.httpTimeoutMs);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        if (text.length < ERROR_TAIL * 2) text += c;
      });
      res.on('end', () => {
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve();
        else reject(new Error(`HTTP ${status}${text ? `: ${tail(text.trim())}` : ''}`));
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(payload);
  });
}

/** `ATRIUM_EVENT_*` variables of an event ('' for a field it has not). */
export function eventEnv(e: OpEvent): Record<string, string> {
  return {
    ATRIUM_EVENT_OP: e.op,
    ATRIUM_EVENT_USER: e.user,
    ATRIUM_EVENT_PATH: e.path,
    ATRIUM_EVENT_DST_PATH: e.dst_path ?? '',
    ATRIUM_EVENT_FRONT: e.front,
    ATRIUM_EVENT_RESULT: e.result,
    ATRIUM_EVENT_BYTES: String(e.bytes ?? 0),
    ATRIUM_EVENT_TIME: new Date(e.time).toISOString(),
    ATRIUM_EVENT_IP: e.ip ?? '',
    ATRIUM_EVENT_REQUEST_ID: e.request_id ?? '',
  };
}

/** The server's environment without its own configuration (ATRIUM_*, ALIST_*: secrets such as the database password). */
function inheritedEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(ATRIUM|ALIST)_/i.test(k)) out[k] = v;
  return out;
}

/**
 * Runs `[program, …args]` without a shell: the event JSON on stdin and in ATRIUM_EVENT_*
 * variables. Exit 0 is success; another exit, a signal or the timeout (the program is killed)
 * is a failure carrying the tail of stderr.
 */
function runCommand(command: string[], body: string, timeoutMs: number): Promise<void> {
  const [program, ...args] = command;
  const env = { ...inheritedEnv(), ...eventEnv(JSON.parse(body) as OpEvent) };
  return new Promise<void>((resolve, reject) => {
    const child = spawn(program!, args, { env, shell: false, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (c: string) => {
      stderr = (stderr + c).slice(-ERROR_TAIL * 2);
    });
    // A program that exits without reading its stdin makes the write fail: not the hook's error.
    child.stdin!.on('error', () => {});
    child.stdin!.end(body);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`can not run ${program}: ${err.message}`));
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      if (timedOut) reject(new Error(`${program} did not finish within ${timeoutMs / 1000} s (killed)${stderr ? `: ${tail(stderr.trim())}` : ''}`));
      else if (code === 0) resolve();
      else reject(new Error(`${program} exited with ${code === null ? `signal ${sig}` : `code ${code}`}${stderr.trim() ? `: ${tail(stderr.trim())}` : ''}`));
    });
  });
}
