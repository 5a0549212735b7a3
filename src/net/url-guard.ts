import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { BadRequest } from '../errors.js';

/**
 * Addresses an offline download must not reach unless the admin allows it
 * (`offline_download_allow_private`): loopback, private, link-local, shared (CGNAT),
 * unspecified, multicast and reserved ranges, so a user can't make the server fetch from
 * itself or its network (SSRF).
 */
const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, bits, 'ipv6');
}

/** The IPv4 address carried inside an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::/96) IPv6 address. */
function embeddedIPv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIPv4(address);
  if (v4) return blocked.check(v4, 'ipv4');
  return blocked.check(address, 'ipv6');
}

/** The refusal of a URL whose host is (or resolves to) a blocked address. */
export class BlockedAddress extends BadRequest {}

export interface ResolvedTarget {
  url: URL;
  /** The address the connection must go to (the one that was checked); none for extra schemes. */
  address?: string;
  family?: 4 | 6;
}

export interface GuardOptions {
  allowPrivate: boolean;
  /** Schemes besides http and https the caller accepts (e.g. `magnet:` for torrent clients). */
  extraSchemes?: readonly string[];
  /** Which addresses are refused when private ones are not allowed (default: `isPrivateAddress`). */
  blocked?: (address: string) => boolean;
  /** The setting that lifts the rule, named in the refusal (default offline_download_allow_private). */
  setting?: string;
}

/**
 * Parses and checks a URL an offline download was asked to fetch: http(s) only, and its host,
 * once resolved, on a public address unless private ones are allowed. Every address a name
 * resolves to is checked, so a name can't hide a private address behind a public one; the
 * caller connects to the returned address (not a second lookup), so the answer can't change
 * between check and use.
 */
export async function resolveTarget(raw: string, opts: GuardOptions): Promise<ResolvedTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadRequest(`invalid url: ${raw}`);
  }
  if (opts.extraSchemes?.includes(url.protocol)) return { url };
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BadRequest(`only http and https urls can be downloaded, not ${url.protocol.replace(/:$/, '')}`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch (err) {
      throw new BadRequest(`can not resolve ${host}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  if (addresses.length === 0) throw new BadRequest(`can not resolve ${host}`);
  if (!opts.allowPrivate) {
    const isBlocked = opts.blocked ?? isPrivateAddress;
    const bad = addresses.find((a) => isBlocked(a.address));
    if (bad) {
      const what = isIP(host) ? `${host} is` : `${host} resolves to ${bad.address},`;
      const setting = opts.setting ?? 'offline_download_allow_private';
      throw new BlockedAddress(`${what} a loopback, private or link-local address; downloading from it is not allowed (setting ${setting})`);
    }
  }
  const first = addresses[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
