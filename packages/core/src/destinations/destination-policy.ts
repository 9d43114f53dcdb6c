import ipaddr from 'ipaddr.js';

/**
 * Decides whether Herald may open a connection to an address. Only public unicast addresses
 * pass, unless the operator allow-lists a range (HERALD_ALLOWED_TARGET_CIDRS). ipaddr.js's
 * `range()` classifies private, loopback, link-local (cloud metadata), CGNAT, multicast,
 * reserved, unspecified, unique-local and the IPv6 transition ranges; everything but
 * 'unicast' is refused. IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
 * The other IPv6 forms that embed an IPv4 address — NAT64 (64:ff9b::/96 and the local-use
 * 64:ff9b:1::/48, both `rfc6052` to ipaddr.js), 6to4 (2002::/16), Teredo (2001::/32), SIIT
 * (::ffff:0:0:0/96) and the deprecated IPv4-compatible ::a.b.c.d (which ipaddr.js calls
 * unicast) — are refused whatever they carry: each can be routed to an IPv4 address Herald
 * would never dial directly.
 */
export class DestinationPolicy {
  private readonly allowedRanges: ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]>;

  constructor(allowedCidrs: readonly string[] = []) {
    this.allowedRanges = allowedCidrs.map((cidr) => {
      const [address, prefix] = ipaddr.parseCIDR(cidr);
      return [normalise(address), normalisedPrefix(address, prefix)];
    });
  }

  /** Why an IP address is refused, or null when Herald may connect to it. */
  refusalReason(ip: string): string | null {
    const canonical = canonicalIpv6(ip);
    if (canonical === null || !ipaddr.isValid(canonical)) return `"${ip}" is not an IP address`;
    const address = normalise(ipaddr.parse(canonical));
    if (this.isAllowListed(address)) return null;
    const range = embedsIpv4(address) ?? address.range();
    return range === 'unicast' ? null : `${address.toString()} is ${RANGE_DESCRIPTIONS[range] ?? `a reserved address (${range})`}`;
  }

  isAllowed(ip: string): boolean {
    return this.refusalReason(ip) === null;
  }

  private isAllowListed(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
    return this.allowedRanges.some(([network, prefix]) => network.kind() === address.kind() && address.match(network, prefix));
  }
}

/** Ranges a reader of an error message understands, with their article. */
const RANGE_DESCRIPTIONS: Record<string, string> = {
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (cloud metadata lives there)',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  reserved: 'a reserved address',
  uniqueLocal: 'a unique-local address',
  ipv4Mapped: 'an IPv4-mapped address',
  ipv4Compatible: 'an IPv4-compatible IPv6 address (deprecated; it embeds an IPv4 address)',
  rfc6145: 'an SIIT address (it embeds an IPv4 address)',
  rfc6052: 'a NAT64 address (it embeds an IPv4 address)',
  '6to4': 'a 6to4 address (it embeds an IPv4 address)',
  teredo: 'a Teredo address (it embeds an IPv4 address)',
};

/** The IPv4-embedding range ipaddr.js calls unicast (::/96); null for every other address. */
function embedsIpv4(address: ipaddr.IPv4 | ipaddr.IPv6): string | null {
  if (address.kind() !== 'ipv6') return null;
  const v6 = address as ipaddr.IPv6;
  const [a, b, c, d, e, f] = v6.parts;
  // ::/96 holds :: and ::1 (ipaddr.js names those) and the deprecated ::a.b.c.d form.
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0 && !['unspecified', 'loopback'].includes(v6.range())) {
    return 'ipv4Compatible';
  }
  return null;
}

/**
 * ipaddr.js reads every `::a.b.c.d` as IPv4-mapped (::ffff:a.b.c.d), which would let the
 * deprecated IPv4-compatible form pass as the IPv4 address it names. The WHATWG URL parser
 * writes IPv6 in canonical hex (`::7f00:1`), which ipaddr.js reads right.
 */
function canonicalIpv6(ip: string): string | null {
  if (!ip.includes(':') || !ip.includes('.')) return ip;
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    // Not an address the URL parser reads (a zone id, an odd IPv4 spelling): never judged by ipaddr.js's reading.
    return null;
  }
}

function normalise(address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (address as ipaddr.IPv6).toIPv4Address();
  }
  return address;
}

function normalisedPrefix(address: ipaddr.IPv4 | ipaddr.IPv6, prefix: number): number {
  const mapped = address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress();
  return mapped ? Math.max(0, prefix - 96) : prefix;
}

/** True when `value` parses as a CIDR range (used to validate configuration). */
export function isValidCidr(value: string): boolean {
  try {
    ipaddr.parseCIDR(value);
    return true;
  } catch {
    return false;
  }
}

const DOTTED_QUAD = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/**
 * The IP address a URL names literally, or null when its host is a name. WHATWG URL parsing
 * already normalises the odd IPv4 spellings (`http://2130706433/` is 127.0.0.1).
 */
export function ipLiteralHost(url: string): string | null {
  let hostname: string;
  try {
    hostname = new URL(url).hostname;
  } catch {
    return null;
  }
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  // The URL parser has already turned every IPv4 form (0x7f.1, 2130706433) into dotted decimal
  // and bracketed IPv6, so a name is recognised without asking ipaddr.js, whose parser throws
  // and catches internally for every name (a measurable share of the api's CPU on PUT webhook).
  if (!DOTTED_QUAD.test(bare) && !bare.includes(':')) return null;
  return ipaddr.isValid(bare) && (ipaddr.IPv4.isValidFourPartDecimal(bare) || bare.includes(':')) ? bare : null;
}

/**
 * The URL's host when it is `localhost` or a name under it (RFC 6761: always the loopback
 * interface, whatever a resolver says), lowercased and without a trailing dot; null otherwise.
 */
export function localhostNameOf(url: string): string | null {
  let hostname: string;
  try {
    hostname = new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  return name === 'localhost' || name.endsWith('.localhost') ? name : null;
}
