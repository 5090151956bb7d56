/**
 * Where the service may send a request that a feed's content chose. A feed names its WebSub
 * hub and its server names redirect targets; followed blindly, a feed could make the service
 * POST to its own admin port, a cloud metadata endpoint (169.254.169.254) or anything else on
 * the operator's network. So a content-chosen destination must be a public address, unless
 * ALLOW_PRIVATE_DESTINATIONS says otherwise (tests, the demo, internal mirrors). URLs the
 * operator configured (the catalogue, WIRES_SOURCES) are trusted and do not come through here.
 *
 * The check runs in the connector, on the address actually connected to: a name is resolved
 * once, its private addresses dropped, and the socket connects only to what is left, so a
 * name that resolves to 127.0.0.1 (or flips to it after a first check) is refused too. IP
 * literals skip DNS, so they are checked before connecting.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { buildConnector } from 'undici';

/** The setting that lets content-chosen requests reach private addresses. */
export const ALLOW_SETTING = 'ALLOW_PRIVATE_DESTINATIONS';

/** IPv4 ranges a content-chosen request may not reach, with what they are. */
const V4_REFUSED: readonly [base: string, bits: number, what: string][] = [
  ['0.0.0.0', 8, 'unspecified address'],
  ['10.0.0.0', 8, 'private address'],
  ['100.64.0.0', 10, 'shared (CGNAT) address'],
  ['127.0.0.0', 8, 'loopback address'],
  ['169.254.0.0', 16, 'link-local address'],
  ['172.16.0.0', 12, 'private address'],
  ['192.168.0.0', 16, 'private address'],
  ['224.0.0.0', 4, 'multicast address'],
  ['240.0.0.0', 4, 'reserved or broadcast address'],
];

const v4Number = (text: string): number => text.split('.').reduce((n, part) => n * 256 + Number(part), 0);

function refusedV4(n: number): string | null {
  for (const [base, bits, what] of V4_REFUSED) {
    const size = 2 ** (32 - bits);
    if (Math.floor(n / size) === Math.floor(v4Number(base) / size)) return what;
  }
  return null;
}

/** The eight 16-bit groups of a valid IPv6 address (any textual form, zone id allowed). */
function v6Groups(text: string): number[] {
  let s = text.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    s = `${s.slice(0, dotted.index)}${(a * 256 + b).toString(16)}:${(c * 256 + d).toString(16)}`;
  }
  const [head, tail] = s.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array<string>(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => Number.parseInt(g, 16));
}

function refusedV6(g: number[]): string | null {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return 'unspecified address';
  if (zeros(0, 7) && g[7] === 1) return 'loopback address';
  // Forms that carry an IPv4 address the network may deliver to, judged by that address:
  // ::a.b.c.d (IPv4-compatible), ::ffff:a.b.c.d (IPv4-mapped), 64:ff9b::a.b.c.d (NAT64),
  // 2002:AABB:CCDD::/48 (6to4).
  const carriesV4 = zeros(0, 6) || (zeros(0, 5) && g[5] === 0xffff) || (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6));
  const embedded = carriesV4 ? g[6]! * 65536 + g[7]! : g[0] === 0x2002 ? g[1]! * 65536 + g[2]! : null;
  if (embedded !== null) {
    const what = refusedV4(embedded);
    return what && `${what} (IPv4 ${[24, 16, 8, 0].map((shift) => Math.floor(embedded / 2 ** shift) % 256).join('.')} inside)`;
  }
  // 64:ff9b:1::/48 is NAT64 for one network's own use (RFC 8215).
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return 'local-use NAT64 address';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local address';
  if ((g[0]! & 0xffc0) === 0xfec0) return 'site-local address';
  if ((g[0]! & 0xfe00) === 0xfc00) return 'unique-local address';
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast address';
  return null;
}

/**
 * Why a content-chosen request may not go to this IP address ("loopback address", "private
 * address"…), or null when it may. Anything that is not an IP address is refused.
 */
export function refusedAddress(address: string): string | null {
  const family = isIP(address.replace(/%.*$/, ''));
  if (family === 4) return refusedV4(v4Number(address));
  if (family === 6) return refusedV6(v6Groups(address.toLowerCase()));
  return 'not an IP address';
}

/** A connection refused because of where it would go. `code` is what errors.ts maps. */
export class BlockedDestination extends Error {
  override readonly name = 'BlockedDestination';
  readonly code = 'ERR_BLOCKED_DESTINATION';
  constructor(
    /** What was going there ("redirect to", "hub"). */
    what: string,
    readonly host: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(`${what} ${host === address ? host : `${host} (${address})`} refused: ${reason}; set ${ALLOW_SETTING}=1 to allow`);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net.connect that keeps only the addresses a content-chosen request may reach. */
function publicLookup(what: string) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const allowed = addresses.filter((a) => refusedAddress(a.address) === null);
      if (allowed.length === 0) {
        const first = addresses[0];
        return callback(new BlockedDestination(what, hostname, first?.address ?? '?', first ? refusedAddress(first.address)! : 'no address'), []);
      }
      if (options.all) return callback(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/**
 * An undici connector (the `connect` option of an Agent) that refuses private destinations.
 * `what` names the request in the refusal ("redirect to", "hub").
 */
export function publicOnlyConnector(what: string, options: buildConnector.BuildOptions): buildConnector.connector {
  const connect = buildConnector({ ...options, lookup: publicLookup(what) });
  return (opts, callback) => {
    // net.connect does no lookup for an IP literal: check it here.
    const literal = isIP(opts.hostname) ? refusedAddress(opts.hostname) : null;
    if (literal !== null) {
      process.nextTick(callback, new BlockedDestination(what, opts.hostname, opts.hostname, literal), null);
      return;
    }
    return connect(opts, callback);
  };
}
