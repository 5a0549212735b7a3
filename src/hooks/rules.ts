import { isIP } from 'node:net';
import { EVENT_OPS, type OpEvent } from '../audit/events.js';
import type { Hook, HookAction, HookInput } from '../db/hooks.js';
import { BadRequest } from '../errors.js';
import { isPrivateAddress } from '../net/url-guard.js';
import { URL_FETCH_SETTING } from '../net/link-fetch.js';

const OPS = new Set<string>(EVENT_OPS);
const MAX_NAME = 100;
const MAX_LIST = 100;

/**
 * A path glob as a regular expression over a whole virtual path: `**` any run of characters
 * (slashes too), `*` any run within one segment, `?` one character of a segment; the rest is
 * literal. `/docs/**` matches everything below /docs (not /docs itself).
 */
export function globRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'u');
}

/** A hook's filters compiled once: does an event concern it? */
export class HookMatcher {
  private readonly ops: Set<string>;
  private readonly users: Set<string>;
  private readonly globs: RegExp[];

  constructor(readonly hook: Hook) {
    this.ops = new Set(hook.events);
    this.users = new Set(hook.users);
    this.globs = hook.paths.map(globRegExp);
  }

  /** The op is one of the hook's, the user one of its users (none: anyone), and the path or destination one of its globs (none: any). */
  matches(e: OpEvent): boolean {
    if (!this.ops.has(e.op)) return false;
    if (this.users.size > 0 && !this.users.has(e.user)) return false;
    if (this.globs.length === 0) return true;
    return this.globs.some((g) => g.test(e.path) || (e.dst_path !== undefined && g.test(e.dst_path)));
  }
}

function stringList(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw new BadRequest(`${field} must be an array of strings`);
  if (value.length > MAX_LIST) throw new BadRequest(`${field} may hold at most ${MAX_LIST} entries`);
  return [...new Set(value.map((v: string) => v.trim()).filter(Boolean))];
}

export interface ActionRules {
  /** `hooks.allow_commands` in config.json. */
  allowCommands: boolean;
  /** `url_fetch_allow_private`: loopback and private URLs allowed. */
  allowPrivate: boolean;
}

/** Refuses a URL that is not http(s), or whose host is a literal private or loopback address while those are not allowed. */
export function checkHookUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadRequest(`action.url is not a valid URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadRequest(`action.url must be an http or https URL, not ${url.protocol.replace(/:$/, '')}`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host) !== 0;
  if (!allowPrivate && ((literal && isPrivateAddress(host)) || host.toLowerCase() === 'localhost')) {
    throw new BadRequest(`action.url: ${host} is a loopback, private or link-local address; hooks may not call it (setting ${URL_FETCH_SETTING})`);
  }
  return url;
}

function actionOf(raw: unknown, rules: ActionRules, old: HookAction | undefined): HookAction {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new BadRequest('action is required: {type: "http", url, secret} or {type: "command", command: [program, arg…]}');
  const a = raw as Record<string, unknown>;
  if (a.type === 'http') {
    if (typeof a.url !== 'string' || a.url === '') throw new BadRequest('action.url is required');
    checkHookUrl(a.url, rules.allowPrivate);
    if (a.secret !== undefined && typeof a.secret !== 'string') throw new BadRequest('action.secret must be a string');
    // Secrets are write-only: an update that leaves it empty keeps the one stored.
    const secret = (a.secret as string | undefined) || (old?.type === 'http' ? old.secret : '');
    if (!secret) throw new BadRequest('action.secret is required (the key of the X-Atrium-Signature HMAC)');
    return { type: 'http', url: a.url, secret };
  }
  if (a.type === 'command') {
    if (!rules.allowCommands) throw new BadRequest('command actions are off: set hooks.allow_commands to true in config.json to allow them');
    const cmd = a.command;
    if (!Array.isArray(cmd) || cmd.length === 0 || cmd.some((v) => typeof v !== 'string')) throw new BadRequest('action.command must be a non-empty array of strings: [program, arg…]');
    if (!cmd[0]) throw new BadRequest('action.command[0] (the program) must not be empty');
    return { type: 'command', command: [...(cmd as string[])] };
  }
  throw new BadRequest(`action.type must be "http" or "command", got ${JSON.stringify(a.type ?? null)}`);
}

/**
 * Checks and normalises a hook definition as given to create or update: a name, at least one
 * known op, path globs starting with `/`, user names, and an action. `old` is the hook being
 * updated (its secret is kept when none is given). Throws BadRequest naming the field.
 */
export function hookInputOf(body: Record<string, unknown>, rules: ActionRules, old?: Hook): HookInput {
  const name = typeof body.name === 'string' ? body.name.trim() : '';
  if (!name) throw new BadRequest('name is required');
  if (name.length > MAX_NAME) throw new BadRequest(`name may be at most ${MAX_NAME} characters`);
  const events = stringList(body.events, 'events');
  if (events.length === 0) throw new BadRequest(`events must name at least one operation (${EVENT_OPS.join(', ')})`);
  const unknown = events.filter((e) => !OPS.has(e));
  if (unknown.length) throw new BadRequest(`events: unknown operation ${unknown.map((u) => `"${u}"`).join(', ')}; known: ${EVENT_OPS.join(', ')}`);
  const paths = stringList(body.paths, 'paths');
  const relative = paths.find((p) => !p.startsWith('/'));
  if (relative !== undefined) throw new BadRequest(`paths: "${relative}" must start with /`);
  const users = stringList(body.users, 'users');
  if (body.disabled !== undefined && typeof body.disabled !== 'boolean') throw new BadRequest('disabled must be true or false');
  return { name, events, paths, users, action: actionOf(body.action, rules, old?.action), disabled: body.disabled === true };
}

/** A hook as admins read it: the HTTP secret is write-only (`secret_set` says whether one is stored). */
export function publicHook(h: Hook, counts?: { pending: number; dead: number }) {
  const action = h.action.type === 'http' ? { type: 'http' as const, url: h.action.url, secret: '', secret_set: h.action.secret !== '' } : h.action;
  return { ...h, action, pending: counts?.pending ?? 0, dead: counts?.dead ?? 0 };
}
