import type { Client } from 'basic-ftp';

/** Connections kept open for reuse; more may be open while transfers run. */
const MAX_IDLE = 4;

/**
 * FTP connections of one storage. A connection does one thing at a time, so each operation takes
 * an idle one (or opens one); a connection found closed is dropped and the operation retried once
 * on a new one, so a storage whose server restarted comes back without being reloaded.
 */
export class FtpPool {
  private idle: Client[] = [];
  private closed = false;

  constructor(private readonly open: () => Promise<Client>) {}

  async acquire(): Promise<Client> {
    if (this.closed) throw new Error('the storage was dropped');
    for (let c = this.idle.pop(); c; c = this.idle.pop()) if (!c.closed) return c;
    return this.open();
  }

  release(c: Client): void {
    if (this.closed || c.closed || this.idle.length >= MAX_IDLE) c.close();
    else this.idle.push(c);
  }

  discard(c: Client): void {
    c.close();
  }

  async use<T>(fn: (c: Client) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const c = await this.acquire();
      try {
        const out = await fn(c);
        this.release(c);
        return out;
      } catch (err) {
        const reply = typeof (err as { code?: unknown }).code === 'number';
        if (reply && !c.closed) {
          this.release(c);
          throw err;
        }
        this.discard(c);
        if (attempt > 0) throw err;
      }
    }
  }

  close(): void {
    this.closed = true;
    for (const c of this.idle.splice(0)) c.close();
  }
}
