import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/**
 * Where an outbound webhook may go (issue 32): `https://` to a public address; a loopback, private,
 * link-local (the cloud metadata service), unique-local, unspecified or otherwise special address,
 * IPv4 or IPv6 (an IPv4-mapped IPv6 address counts as its IPv4 one), only when
 * OUTBOUND_WEBHOOKS_ALLOW_PRIVATE lists the URL's host, the address, or a CIDR range holding it,
 * and then `http://` too. Checked when the URL is saved and again at each delivery on the
 * address the host resolves to then, which is the address the delivery connects to.
 *
 * IPv6 ranges that embed an IPv4 address (issue 40, finding 6): the deprecated IPv4-compatible
 * `::/96` (`::127.0.0.1`, written `::7f00:1`), 6to4 `2002::/16`, Teredo `2001::/32` and SIIT
 * `::ffff:0:0:0/96` are reserved whatever they embed, as nothing public should be reached through
 * them. NAT64's well-known `64:ff9b::/96` is how an IPv6-only host reaches an IPv4 one through
 * DNS64, so it counts as its embedded IPv4 address (public passes, `64:ff9b::10.0.0.1` is private);
 * the local-use `64:ff9b:1::/48` puts the IPv4 address where its operator chose, so it is reserved.
 */

export type AllowedTarget = { url: URL; address: string; family: 4 | 6 };

/** Why a URL is refused (the message of the 400 naming `url`, and the delivery's error). */
export class RefusedUrl extends Error {}

type Allowed = { hosts: Set<string>; ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] };

/** The allow-list entries as host names, addresses (a /32 or /128 range) and ranges; an unreadable entry is a host name. */
function parseAllowList(entries: readonly string[]): Allowed {
  const allowed: Allowed = { hosts: new Set(), ranges: [] };
  for (const raw of entries) {
    const entry = raw
      .trim()
      .toLowerCase()
      .replace(/^\[|\]$/g, '');
    if (!entry) continue;
    if (entry.includes('/') && ipaddr.isValidCIDR(entry)) {
      const [address, bits] = ipaddr.parseCIDR(entry);
      allowed.ranges.push([canonical(address), canonical(address).kind() === address.kind() ? bits : bits - 96]);
    } else if (ipaddr.isValid(entry)) {
      const address = canonical(ipaddr.parse(entry));
      allowed.ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
    } else allowed.hosts.add(entry);
  }
  return allowed;
}

/** An IPv4-mapped IPv6 address as its IPv4 address; any other as it is. */
function canonical(address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}

const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * The address's range as ipaddr.js names it ('unicast' for a public one), with the IPv4-embedding
 * IPv6 ranges judged as described at the top of this file.
 */
function rangeOf(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  const range = address.range();
  if (address.kind() === 'ipv4') return range;
  const v6 = address as ipaddr.IPv6;
  if (range === 'unicast' && v6.match(IPV4_COMPATIBLE)) return 'IPv4-compatible (deprecated)';
  if (v6.match(NAT64_WELL_KNOWN)) return ipaddr.fromByteArray(v6.toByteArray().slice(12)).range();
  return range;
}

const inRange = (address: ipaddr.IPv4 | ipaddr.IPv6, [range, bits]: [ipaddr.IPv4 | ipaddr.IPv6, number]) =>
  address.kind() === range.kind() && address.match(range, bits);

/** A public unicast address: not loopback, private, link-local, unique-local, unspecified, multicast, CGNAT or reserved. */
export function isPublicAddress(text: string): boolean {
  return rangeOf(canonical(ipaddr.parse(text))) === 'unicast';
}

const hostOf = (url: URL) => url.hostname.toLowerCase().replace(/^\[|\]$/g, '');

/** The host's addresses: itself when it is an address, else as DNS resolves it now. */
async function addressesOf(host: string): Promise<{ address: string; family: 4 | 6 }[]> {
  if (ipaddr.isValid(host)) return [{ address: host, family: ipaddr.parse(host).kind() === 'ipv4' ? 4 : 6 }];
  try {
    const found = await lookup(host, { all: true, verbatim: true });
    return found.map((f) => ({ address: f.address, family: f.family === 6 ? 6 : 4 }));
  } catch {
    throw new RefusedUrl(`host ${host} could not be resolved`);
  }
}

/**
 * The URL checked against the rules above on the addresses its host resolves to now; answers the
 * address to connect to (the first; every one must pass, so a host that also resolves to a private
 * address is refused). Throws RefusedUrl.
 */
export async function checkWebhookUrl(text: string, allowList: readonly string[]): Promise<AllowedTarget> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RefusedUrl('must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new RefusedUrl('must be an https:// URL');
  if (url.username || url.password) throw new RefusedUrl('must not carry a user name or password');
  const host = hostOf(url);
  const allowed = parseAllowList(allowList);
  const hostAllowed = allowed.hosts.has(host);
  const addresses = await addressesOf(host);
  if (addresses.length === 0) throw new RefusedUrl(`host ${host} could not be resolved`);
  let allAllowed = true;
  for (const { address } of addresses) {
    const parsed = canonical(ipaddr.parse(address));
    const listed = hostAllowed || allowed.ranges.some((range) => inRange(parsed, range));
    if (!listed) allAllowed = false;
    const range = rangeOf(parsed);
    if (!listed && range !== 'unicast') {
      throw new RefusedUrl(
        `resolves to ${address}, a ${range} address (not allowed unless OUTBOUND_WEBHOOKS_ALLOW_PRIVATE lists it)`,
      );
    }
  }
  if (url.protocol === 'http:' && !allAllowed) throw new RefusedUrl('must be an https:// URL');
  return { url, ...addresses[0] };
}
