/**
 * The key the relay counts a client by: an IPv4 address (IPv4-mapped IPv6 such as
 * `::ffff:203.0.113.7` is that IPv4 address), or an IPv6 address's /64. One IPv6 host is usually
 * given a whole /64, so counting single IPv6 addresses would give it 2^64 allowances.
 */
import ipaddr from "ipaddr.js";

export function clientKey(remoteAddress: string | undefined): string {
  if (!remoteAddress) return "unknown";
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // A zone id (`fe80::1%eth0`) names the interface, not the client.
    addr = ipaddr.process(remoteAddress.replace(/%.*$/, ""));
  } catch {
    return remoteAddress;
  }
  if (addr.kind() === "ipv4") return addr.toString();
  const prefix = (addr as ipaddr.IPv6).toByteArray().slice(0, 8);
  return `${new ipaddr.IPv6([...prefix, 0, 0, 0, 0, 0, 0, 0, 0]).toString()}/64`;
}
