import os from 'node:os';
import type { EventOrigin, OpEvent, OpEvents } from '../audit/events.js';
import { Recorder } from '../audit/record.js';
import type { Hook, HookDelivery, HooksRepo } from '../db/hooks.js';
import { BadRequest, NotFound } from '../errors.js';
import type { Logger } from '../logger.js';
import { deliver } from './actions.js';
import { HookMatcher, hookInputOf, publicHook } from './rules.js';

/** Waits after the 1st, 2nd, … failed attempt; after the last, the delivery is dead. */
export const DEFAULT_BACKOFF_MS = [1_000, 5_000, 30_000, 120_000, 600_000];

export interface HookOptions {
  /** Waits between attempts (at least 3 entries: at least three retries). */
  backoffMs?: number[];
  /** How often a process looks for due deliveries (others' and retries); default 1 s. */
  pollMs?: number;
  /** Events are gathered this long before one insert; default 100 ms. */
  flushMs?: number;
  httpTimeoutMs?: number;
  commandTimeoutMs?: number;
}

/** What the service reads of settings and config.json at each use. */
export interface HookEnv {
  /** `url_fetch_allow_private` now. */
  allowPrivate(): boolean;
  /** `hooks.allow_commands` in config.json. */
  allowCommands: boolean;
}

const CLAIM_BATCH = 20;
/** A claim holds this long: longer than any attempt's timeout. */
const LEASE_MS = 120_000;

/**
 * Event hooks (sftpgo's event manager): admin-defined rules matched against every operation
 * event of this process, queued in the database (`hook_deliveries`) off the request path, and
 * delivered by a sender loop that claims due rows atomically — so each event is delivered once
 * in a cluster and survives a restart. Failures back off and end as dead letters.
 */
export class Hooks {
  private readonly backoff: number[];
  private readonly opts: Required<Omit<HookOptions, 'backoffMs'>>;
  private readonly me = `${os.hostname()}:${process.pid}`;
  private queue: OpEvent[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private pollTimer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private again = false;
  private running = false;
  /** Every hook (the poll runs while there is one) and the enabled ones compiled; undefined until loaded. */
  private known: { any: boolean; matchers: HookMatcher[] } | undefined;
  private loading: Promise<void> | undefined;
  /** Called after this process changed the hooks (cluster mode: announced to the others). */
  onChange: () => void = () => {};

  constructor(
    private readonly repo: HooksRepo,
    private readonly events: OpEvents,
    private readonly env: HookEnv,
    private readonly log: Logger,
    opts: HookOptions = {},
  ) {
    this.backoff = opts.backoffMs ?? DEFAULT_BACKOFF_MS;
    if (this.backoff.length < 3) throw new Error('hooks: backoffMs needs at least three waits (three retries)');
    this.opts = { pollMs: opts.pollMs ?? 1_000, flushMs: opts.flushMs ?? 100, httpTimeoutMs: opts.httpTimeoutMs ?? 10_000, commandTimeoutMs: opts.commandTimeoutMs ?? 30_000 };
    events.on((e) => this.take(e));
  }

  // ---- admin ----

  async list(page: number, perPage: number) {
    const { hooks, total } = await this.repo.list(page, perPage);
    const counts = await this.repo.counts();
    return { content: hooks.map((h) => publicHook(h, counts.get(h.id))), total };
  }

  async get(id: number) {
    const h = await this.repo.byId(id);
    if (!h) throw new NotFound('hook not found');
    return publicHook(h, (await this.repo.counts()).get(id));
  }

  /**
   * Reads the hooks again (after a change here or, in cluster mode, in another process). The
   * events are matched against this copy, so an event costs no query, and with no hook at all
   * nothing is queued or polled.
   */
  reload(): Promise<void> {
    this.loading ??= (async () => {
      try {
        const all = await this.repo.all();
        const matchers = all.filter((h) => !h.disabled && (h.action.type === 'http' || this.env.allowCommands)).map((h) => new HookMatcher(h));
        const had = this.known?.any ?? false;
        this.known = { any: all.length > 0, matchers };
        if (this.known.any && !had) this.schedule(0);
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  private async changed(): Promise<void> {
    await this.reload().catch((err: unknown) => this.log.warn({ err }, 'hooks: reading the hooks failed'));
    this.onChange();
  }

  private rules() {
    return { allowCommands: this.env.allowCommands, allowPrivate: this.env.allowPrivate() };
  }

  async create(admin: string, body: Record<string, unknown>, origin: EventOrigin) {
    const name = typeof body.name === 'string' ? body.name : '';
    return new Recorder(this.events, admin, origin).run('hook_create', name, async () => {
      const input = hookInputOf(body, this.rules());
      if (await this.repo.byName(input.name)) throw new BadRequest(`a hook named "${input.name}" exists already`);
      const id = await this.repo.create(input, Date.now());
      await this.changed();
      return publicHook((await this.repo.byId(id))!);
    });
  }

  async update(admin: string, id: number, body: Record<string, unknown>, origin: EventOrigin) {
    const name = typeof body.name === 'string' ? body.name : String(id);
    return new Recorder(this.events, admin, origin).run('hook_update', name, async () => {
      const old = await this.repo.byId(id);
      if (!old) throw new NotFound('hook not found');
      const input = hookInputOf(body, this.rules(), old);
      const other = await this.repo.byName(input.name);
      if (other && other.id !== id) throw new BadRequest(`a hook named "${input.name}" exists already`);
      await this.repo.update(id, input, Date.now());
      await this.changed();
      return publicHook((await this.repo.byId(id))!);
    });
  }

  async delete(admin: string, id: number, origin: EventOrigin): Promise<void> {
    const old = await this.repo.byId(id);
    await new Recorder(this.events, admin, origin).run('hook_delete', old?.name ?? String(id), async () => {
      if (!old) throw new NotFound('hook not found');
      await this.repo.delete(id);
      await this.changed();
    });
  }

  /** A hook's dead letters, each with its event parsed. */
  async dead(id: number, page: number, perPage: number) {
    if (!(await this.repo.byId(id))) throw new NotFound('hook not found');
    const { letters, total } = await this.repo.dead(id, page, perPage);
    return { content: letters.map(({ id: letter, hook_id, event, attempts, last_error, created_at }) => ({ id: letter, hook_id, event: JSON.parse(event) as OpEvent, attempts, last_error, created_at })), total };
  }

  /** Dead letters sent again (from the first attempt); the number revived. */
  async resend(ids: number[]): Promise<number> {
    const n = await this.repo.revive(ids, Date.now());
    if (n > 0) this.wake();
    return n;
  }

  async purge(sel: { ids?: number[]; hookId?: number }): Promise<number> {
    if (!sel.ids && sel.hookId === undefined) throw new BadRequest('give ids (dead letters) or hook_id (all of its dead letters)');
    return this.repo.purge(sel);
  }

  // ---- events in: matched and queued off the request path ----

  /** The event listener: remembers the event and returns; never waits, never throws. */
  private take(e: OpEvent): void {
    if (this.known && this.known.matchers.length === 0) return;
    this.queue.push(e);
    this.flushTimer ??= setTimeout(() => void this.flush(), this.opts.flushMs);
  }

  /** Writes the gathered events' deliveries: one query for the hooks, one insert for the rows. */
  flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.queue;
    this.queue = [];
    this.flushing = this.flushing.then(async () => {
      if (batch.length === 0) return;
      try {
        if (!this.known) await this.reload();
        const { matchers } = this.known!;
        const rows: Array<[number, string]> = [];
        for (const e of batch) for (const m of matchers) if (m.matches(e)) rows.push([m.hook.id, JSON.stringify(e)]);
        await this.repo.enqueue(rows, Date.now());
        if (rows.length > 0) this.wake();
      } catch (err) {
        this.log.warn({ err, events: batch.length }, 'hooks: queueing events failed');
      }
    });
    return this.flushing;
  }

  // ---- deliveries out ----

  /** Starts the sender loop (the server; other commands only queue). */
  start(): void {
    if (this.running) return;
    this.running = true;
    if (this.known) this.schedule(0);
    else void this.reload().then(() => this.schedule(0), (err: unknown) => {
      this.log.warn({ err }, 'hooks: reading the hooks failed');
      this.schedule(this.opts.pollMs);
    });
  }

  /** Queues what was gathered and stops sending; attempts under way end first. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    await this.flush();
    await this.polling;
  }

  private schedule(ms: number): void {
    if (!this.running || (this.known && !this.known.any)) return;
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = setTimeout(() => void this.poll(), ms);
    this.pollTimer.unref?.();
  }

  /** New rows or revived letters: look now rather than at the next tick. */
  private wake(): void {
    if (!this.running) return;
    if (this.polling) this.again = true;
    else this.schedule(0);
  }

  private poll(): Promise<void> {
    this.polling ??= (async () => {
      try {
        do {
          this.again = false;
          await this.sendDue();
        } while (this.again && this.running);
      } catch (err) {
        this.log.warn({ err }, 'hooks: sending failed');
      } finally {
        this.polling = undefined;
        this.schedule(this.opts.pollMs);
      }
    })();
    return this.polling;
  }

  /** Claims and sends due deliveries until none is left. */
  private async sendDue(): Promise<void> {
    for (;;) {
      const now = Date.now();
      const ids = await this.repo.due(now, CLAIM_BATCH);
      if (ids.length === 0) return;
      const until = now + LEASE_MS;
      const claimed = (await Promise.all(ids.map((id) => this.repo.claim(id, this.me, now, until)))).filter((d): d is HookDelivery => d !== undefined);
      if (claimed.length === 0) return;
      const hooks = new Map((await this.repo.all()).map((h) => [h.id, h]));
      await Promise.all(claimed.map((d) => this.attempt(d, hooks.get(d.hook_id), until)));
      if (!this.running) return;
    }
  }

  private async attempt(d: HookDelivery, hook: Hook | undefined, until: number): Promise<void> {
    try {
      if (!hook) throw new Error('the hook was deleted');
      await deliver(hook.action, d.event, { allowPrivate: this.env.allowPrivate(), allowCommands: this.env.allowCommands, httpTimeoutMs: this.opts.httpTimeoutMs, commandTimeoutMs: this.opts.commandTimeoutMs });
      await this.repo.delivered(d.id, this.me, until);
    } catch (err) {
      const attempts = d.attempts + 1;
      const dead = attempts > this.backoff.length;
      const error = (err as Error).message || String(err);
      const wait = this.backoff[attempts - 1] ?? 0;
      await this.repo.failed(d.id, this.me, until, { attempts, nextAt: Date.now() + wait, dead, error });
      if (dead) this.log.warn({ hook: hook?.name, delivery: d.id, error }, 'hooks: delivery given up (dead letter)');
      else if (wait < this.opts.pollMs) setTimeout(() => this.wake(), wait).unref?.();
    }
  }
}
