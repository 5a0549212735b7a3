import net from 'node:net';

/** Ports passive data connections may use, from the `ftp_pasv_port_map` setting. */
export interface PortChoice {
  /** The port announced to the client. */
  exposed: number;
  /** The port listened on (differs behind a port-mapping NAT or container). */
  listened: number;
}

/**
 * Parses `ftp_pasv_port_map`: lines or commas of `port`, `a-b` or `exposed:listened` (each
 * side may be a range of the same length). Empty means any free port.
 */
export function parsePortMap(text: string): PortChoice[] {
  const out: PortChoice[] = [];
  const range = (s: string): [number, number] => {
    const m = /^(\d+)(?:-(\d+))?$/.exec(s.trim());
    if (!m) throw new Error(`ftp_pasv_port_map: "${s}" is not a port or a range`);
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (a < 1 || b > 65535 || b < a) throw new Error(`ftp_pasv_port_map: "${s}" is not a valid range`);
    return [a, b];
  };
  for (const item of text.split(/[\n,]/).map((s) => s.trim()).filter(Boolean)) {
    const [exp, lis] = item.split(':');
    const [e0, e1] = range(exp!);
    const [l0, l1] = lis === undefined ? [e0, e1] : range(lis);
    if (e1 - e0 !== l1 - l0) throw new Error(`ftp_pasv_port_map: "${item}" maps ranges of different lengths`);
    for (let i = 0; i <= e1 - e0; i++) out.push({ exposed: e0 + i, listened: l0 + i });
  }
  return out;
}

/**
 * One passive-mode data listener: accepts a single connection, from the control connection's
 * address only (when `checkIp`), within `timeoutMs`.
 */
export class PassiveListener {
  private readonly server = net.createServer();
  private socket?: net.Socket;
  private waiters: Array<(s: net.Socket | Error) => void> = [];
  exposedPort = 0;

  constructor(
    private readonly clientIp: string,
    private readonly checkIp: boolean,
  ) {
    this.server.on('connection', (s) => {
      // A reset before or after the transfer must not become an uncaught error.
      s.on('error', () => undefined);
      if ((this.checkIp && s.remoteAddress !== this.clientIp) || this.socket) {
        s.destroy();
        return;
      }
      this.socket = s;
      this.server.close();
      for (const w of this.waiters.splice(0)) w(s);
    });
  }

  /** Listens on `host`, on a port of `choices` (tried in a random order, `attempts` times) or any. */
  async listen(host: string, choices: PortChoice[], attempts: number): Promise<void> {
    if (choices.length === 0) {
      await this.tryListen(host, 0);
      this.exposedPort = (this.server.address() as net.AddressInfo).port;
      return;
    }
    for (let i = 0; i < Math.max(1, attempts); i++) {
      const c = choices[Math.floor(Math.random() * choices.length)]!;
      try {
        await this.tryListen(host, c.listened);
        this.exposedPort = c.exposed;
        return;
      } catch {
        // in use: try another
      }
    }
    throw new Error('no free passive port');
  }

  private tryListen(host: string, port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /** The data connection, once the client opened it. */
  accept(timeoutMs: number): Promise<net.Socket> {
    if (this.socket) return Promise.resolve(this.socket);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        reject(new Error('the data connection was not opened in time'));
      }, timeoutMs);
      const done = (s: net.Socket | Error) => {
        clearTimeout(timer);
        if (s instanceof Error) reject(s);
        else resolve(s);
      };
      this.waiters.push(done);
    });
  }

  close(): void {
    this.server.close();
    this.socket?.destroy();
    for (const w of this.waiters.splice(0)) w(new Error('the data connection was closed'));
  }
}

/**
 * Ends a data connection after its transfer and waits until it is closed (in TLS, after the
 * `close_notify` went out), so that 226 follows the end of the data; one that does not close
 * within `timeoutMs` is destroyed.
 */
export function endDataSocket(socket: net.Socket, timeoutMs: number): Promise<void> {
  if (socket.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.end();
  });
}
