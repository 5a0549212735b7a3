/** `host:port`, `[v6]:port` or a bare host (with the protocol's default port). */
export function splitHostPort(address: string, defaultPort: number): { host: string; port: number } {
  const a = address.trim().replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '');
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(a);
  if (v6) return { host: v6[1]!, port: v6[2] ? Number(v6[2]) : defaultPort };
  const i = a.lastIndexOf(':');
  if (i > 0 && a.indexOf(':') === i) {
    const port = Number(a.slice(i + 1));
    if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`invalid port in address ${address}`);
    return { host: a.slice(0, i), port };
  }
  if (a === '') throw new Error('address is required');
  return { host: a, port: defaultPort };
}
