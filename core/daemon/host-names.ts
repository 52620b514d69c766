/**
 * Which `Host` names this daemon: the one rule against DNS rebinding, the same for every bind.
 *
 * A page can make a browser send a request to the daemon under a name it controls (DNS rebinding:
 * evil.example first resolves to the attacker's server, then to the daemon's address), and the
 * browser then treats the daemon's answers as evil.example's own. The browser still sends
 * `Host: evil.example`, so the daemon answers only to names that cannot be rebound by someone
 * else: a loopback name, an address of this machine (an IP literal resolves through no DNS), the
 * bind address, or a name the owner listed in `daemon.allowedHosts`.
 */
import type { IncomingHttpHeaders } from "node:http";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import ipaddr from "ipaddr.js";
import { hostAuthority, hostnameOf } from "./own-origin.js";

export interface HostPolicy {
  /** `daemon.bind`: an address or a name. */
  bind: string;
  /** `daemon.allowedHosts`: more names (or addresses) the owner says are this daemon's. */
  allowedHosts: readonly string[];
  /** The addresses of this machine (default: `os.networkInterfaces()`, asked at each check). */
  localAddresses?: () => Iterable<string>;
}

/** A socket address on loopback (127.0.0.0/8, `::1`, or either mapped into IPv6). */
export function isLoopbackAddress(addr: string): boolean {
  const a = addr.startsWith("::ffff:") ? addr.slice(7) : addr;
  return a === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/** The canonical text of an IP literal (IPv6 compressed, an IPv4-mapped address as IPv4), else undefined. */
function canonicalIp(name: string): string | undefined {
  const bare = name.replace(/^\[(.*)\]$/, "$1");
  return isIP(bare) === 0 ? undefined : ipaddr.process(bare).toString();
}

/** A loopback name as a Host gives it: `localhost`, `127.x.x.x`, `::1` (bracketed or not). */
export function isLoopbackName(name: string): boolean {
  const n = name.toLowerCase();
  if (n === "localhost") return true;
  const ip = canonicalIp(n);
  return ip !== undefined && isLoopbackAddress(ip);
}

/** True when `bind` is a loopback address or name (any of 127.0.0.0/8, ::1, localhost). */
export function isLoopbackBind(bind: string): boolean {
  return isLoopbackName(bind);
}

function machineAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
}

/** One name as it is compared: an IP literal canonical, any other name lower-cased. */
function comparable(name: string): string {
  return canonicalIp(name) ?? name.toLowerCase();
}

/** Whether a hostname (no port; IPv6 with or without brackets) names this daemon under `policy`. */
export function namesThisDaemon(hostname: string, policy: HostPolicy): boolean {
  if (isLoopbackName(hostname)) return true;
  const name = comparable(hostname);
  if (policy.allowedHosts.some((h) => comparable(h) === name)) return true;
  // A wildcard bind (0.0.0.0, ::) is no address a request can be sent to.
  const bind = comparable(policy.bind);
  if (bind === name && bind !== "0.0.0.0" && bind !== "::") return true;
  if (canonicalIp(name) === undefined) return false;
  for (const a of (policy.localAddresses ?? machineAddresses)()) if (comparable(a) === name) return true;
  return false;
}

/**
 * Whether a request's `Host` is a loopback name (or absent: an HTTP/1.0 client, never a browser).
 * Only such a request can have SPEC.md's loopback exemption: a page under any other name reaches
 * the loopback socket too (through a wildcard bind), and must not borrow the exemption.
 */
export function hasLoopbackHost(headers: IncomingHttpHeaders): boolean {
  if (headers.host === undefined) return true;
  const authority = hostAuthority(headers.host);
  return authority !== undefined && isLoopbackName(hostnameOf(authority));
}
