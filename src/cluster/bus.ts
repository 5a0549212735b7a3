import { randomBytes } from 'node:crypto';
import type { Redis, RedisOptions } from 'ioredis';
import type { Logger } from '../logger.js';

/** What one process tells the others; each names what changed in the shared database. */
export type ClusterEvent =
  | { t: 'listing'; storage: number; path: string; recursive: boolean }
  | { t: 'storage'; id: number }
  | { t: 'settings' }
  | { t: 'metas' }
  | { t: 'auth' }
  | { t: 'hooks' }
  | { t: 'task'; op: 'cancel' | 'remove'; id: string }
  | { t: 'share-end'; id: string };

/** Fan-out of invalidations between the processes sharing one database. */
export interface ClusterBus {
  /** This process's id (messages it sent are not delivered back to it). */
  readonly node: string;
  /** Sends an event; resolves once Redis took it (a failure is logged, never thrown). */
  publish(event: ClusterEvent): Promise<void>;
  subscribe(handler: (event: ClusterEvent) => void): void;
  /** Called each time the subscriber is connected again after a drop (messages may have been missed). */
  onReconnect(handler: () => void): void;
  /** Called when the subscriber's connection drops (messages may be missed until it is back). */
  onDisconnect(handler: () => void): void;
  close(): Promise<void>;
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'redis.url';
  }
}

/**
 * A new ioredis connection (the package is loaded only in cluster mode). The first connection
 * must succeed, so a wrong `redis.url` stops start-up with a message; later drops are logged
 * and ioredis reconnects (re-subscribing the subscriber).
 */
export async function connectRedis(url: string, log: Logger, opts: RedisOptions = {}): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { lazyConnect: true, ...opts });
  let connected = false;
  client.on('error', (err: Error) => {
    if (connected) log.warn({ err: err.message, redis: redactUrl(url) }, 'redis connection error');
  });
  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    throw new Error(`cannot connect to Redis at ${redactUrl(url)} (config redis.url): ${(err as Error).message}`);
  }
  connected = true;
  return client;
}

/**
 * Redis pub/sub on one channel, `<key_prefix>events`: a publisher connection and a subscriber
 * connection (a subscribed ioredis connection can issue no other commands). Delivery is at
 * most once; what is missed while disconnected is caught by the state versions in the database
 * (cluster/staleness.ts), checked every second and at once when the subscriber reconnects.
 */
export class RedisBus implements ClusterBus {
  readonly node = randomBytes(6).toString('hex');
  private readonly handlers: Array<(event: ClusterEvent) => void> = [];
  private readonly reconnected: Array<() => void> = [];
  private readonly disconnected: Array<() => void> = [];
  private closed = false;

  private constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    private readonly channel: string,
    private readonly log: Logger,
  ) {
    // 'ready' comes again after every reconnect (ioredis has subscribed the channel again by then)
    sub.on('ready', () => {
      if (this.closed) return;
      log.info({ node: this.node }, 'cluster bus reconnected: checking the shared state');
      for (const h of this.reconnected) h();
    });
    sub.on('close', () => {
      if (this.closed) return;
      for (const h of this.disconnected) h();
    });
    sub.on('message', (channel: string, text: string) => {
      if (channel !== this.channel) return;
      let msg: { from: string; event: ClusterEvent };
      try {
        msg = JSON.parse(text);
      } catch {
        return;
      }
      if (msg.from === this.node) return;
      for (const h of this.handlers) {
        try {
          h(msg.event);
        } catch (err) {
          this.log.error({ err, event: msg.event }, 'cluster event failed');
        }
      }
    });
  }

  static async open(url: string, prefix: string, log: Logger): Promise<RedisBus> {
    const pub = await connectRedis(url, log);
    const sub = await connectRedis(url, log);
    const channel = `${prefix}events`;
    await sub.subscribe(channel);
    return new RedisBus(pub, sub, channel, log);
  }

  async publish(event: ClusterEvent): Promise<void> {
    if (this.closed) return;
    try {
      await this.pub.publish(this.channel, JSON.stringify({ from: this.node, event }));
    } catch (err) {
      this.log.warn({ err, event }, 'cluster publish failed');
    }
  }

  subscribe(handler: (event: ClusterEvent) => void): void {
    this.handlers.push(handler);
  }

  onReconnect(handler: () => void): void {
    this.reconnected.push(handler);
  }

  onDisconnect(handler: () => void): void {
    this.disconnected.push(handler);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([this.sub.quit(), this.pub.quit()]);
  }
}
