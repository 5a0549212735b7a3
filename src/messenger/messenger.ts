import { NotFound, Unavailable } from '../errors.js';

/** A message for the admin's Messenger page: text, or an image (a URL or data URL) such as a QR code. */
export interface PageMessage {
  type: 'string' | 'image';
  content: string;
}

interface Waiter<T> {
  resolve(v: T): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * OpenList's message channel between the server and the admin's Messenger page
 * (`/api/admin/message/get|send`): two rendezvous points, as OpenList's unbuffered channels. A
 * server part that needs the admin (a driver showing a QR code to scan, asking for a code) calls
 * `send` and waits until the page fetches the message, or `receive` and waits until the admin
 * sends one. The page polls `get` every second: with no server part waiting to send it answers
 * 404 "no message"; its `send` reaches a server part waiting in `receive`, or answers 500
 * "nowhere needed". State is per process (the page talks to the node it is connected to).
 */
export class Messenger {
  private readonly senders: Array<Waiter<void> & { message: PageMessage }> = [];
  private readonly receivers: Array<Waiter<string>> = [];

  /** Offers a message to the page; resolves when the page has taken it, rejects after `seconds`. */
  send(message: PageMessage, seconds: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const w = {
        message,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.senders.splice(this.senders.indexOf(w), 1);
          reject(new Error('send timeout'));
        }, seconds * 1000),
      };
      this.senders.push(w);
    });
  }

  /** Waits for the admin's next message; rejects after `seconds`. */
  receive(seconds: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const w = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.receivers.splice(this.receivers.indexOf(w), 1);
          reject(new Error('receive timeout'));
        }, seconds * 1000),
      };
      this.receivers.push(w);
    });
  }

  /** The page's `get`: the oldest offered message. */
  take(): PageMessage {
    const w = this.senders.shift();
    if (!w) throw new NotFound('no message');
    clearTimeout(w.timer);
    w.resolve();
    return w.message;
  }

  /** The page's `send`: hands the text to the oldest waiting receiver. */
  deliver(text: string): void {
    const w = this.receivers.shift();
    if (!w) throw new Unavailable('nowhere needed');
    clearTimeout(w.timer);
    w.resolve(text);
  }

  /** Ends every wait (server shutdown). */
  close(): void {
    for (const w of [...this.senders.splice(0), ...this.receivers.splice(0)]) {
      clearTimeout(w.timer);
      w.reject(new Error('server closing'));
    }
  }
}
