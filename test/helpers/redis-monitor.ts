import net from 'node:net';

/**
 * Redis's MONITOR on a connection of its own, read line by line: each command Redis runs, as its
 * arguments. ioredis's `monitor()` keeps a command queue beside the stream, and on a busy server
 * (several suites at once) it failed with "Command queue state error"; this reads the protocol
 * directly. `onCommand` gets the arguments of every command after the OK.
 */
export async function monitorRedis(url: string, onCommand: (args: string[]) => void): Promise<{ close(): void }> {
  const u = new URL(url);
  const socket = net.connect(Number(u.port || 6379), u.hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  socket.on('error', () => undefined);
  let buffer = '';
  let ready: (() => void) | undefined;
  const started = new Promise<void>((resolve) => (ready = resolve));
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\r\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 2);
      if (line === '+OK') ready?.();
      else if (line.startsWith('+')) onCommand(parseArgs(line.slice(line.indexOf('] ') + 2)));
    }
  });
  socket.write('MONITOR\r\n');
  await started;
  return { close: () => socket.destroy() };
}

/** The quoted arguments of a MONITOR line (`"get" "key"`, with \" \\ \n \xNN escapes). */
function parseArgs(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    if (s[i] !== '"') {
      i++;
      continue;
    }
    let v = '';
    i++;
    while (i < s.length && s[i] !== '"') {
      if (s[i] === '\\' && i + 1 < s.length) {
        const c = s[i + 1]!;
        if (c === 'x') {
          v += String.fromCharCode(parseInt(s.slice(i + 2, i + 4), 16));
          i += 4;
          continue;
        }
        v += c === 'n' ? '\n' : c === 'r' ? '\r' : c === 't' ? '\t' : c;
        i += 2;
        continue;
      }
      v += s[i];
      i++;
    }
    out.push(v);
    i++;
  }
  return out;
}

/**
 * Counts the commands Redis runs that name a key or channel under `keyPrefix`, less BullMQ's own
 * pollers (keys under `<prefix>bull:`, a burst every 30 s per queue whatever the traffic).
 * `counted()` answers the count once every command run before the call is in it: MONITOR streams
 * commands in the order Redis ran them, possibly late, so it sends a marker on a connection of
 * its own and waits to see it on the stream.
 */
export async function countCommands(url: string, keyPrefix: string): Promise<{ counted(): Promise<number>; close(): void }> {
  const marker = `${keyPrefix}monitor-marker`;
  let ours = 0;
  let marked: (() => void) | undefined;
  const monitor = await monitorRedis(url, (args) => {
    if (args[1] === marker) marked?.();
    else if (args.some((a) => a.startsWith(keyPrefix)) && !args.some((a) => a.startsWith(`${keyPrefix}bull:`))) ours++;
  });
  const u = new URL(url);
  const sender = net.connect(Number(u.port || 6379), u.hostname);
  sender.on('data', () => undefined);
  sender.on('error', () => undefined);
  return {
    counted: async () => {
      const seen = new Promise<void>((resolve) => (marked = resolve));
      sender.write(`*2\r\n$3\r\nGET\r\n$${Buffer.byteLength(marker)}\r\n${marker}\r\n`);
      await seen;
      return ours;
    },
    close: () => {
      monitor.close();
      sender.destroy();
    },
  };
}
