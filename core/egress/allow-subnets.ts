/**
 * `webhooks.allowSubnets`: CIDR ranges exempted from `private_target` (for a receiver on the
 * user's own machine). It never relaxes https or redirects.
 */
import ipaddr from "ipaddr.js";
import { parseStrictIp, type AddressClass } from "./classify.js";

export interface AllowSubnets {
  /** The entries in effect. */
  readonly cidrs: readonly string[];
  /** Entries that are not CIDR ranges: ignored (which only ever blocks more). */
  readonly invalid: readonly string[];
  /** The configured CIDR that exempts this address (or its embedded IPv4), if any. */
  match(cls: AddressClass): string | undefined;
}

export function parseAllowSubnets(entries: readonly string[] = []): AllowSubnets {
  const nets: Array<{ cidr: string; net: [ipaddr.IPv4 | ipaddr.IPv6, number] }> = [];
  const invalid: string[] = [];
  for (const cidr of entries) {
    try {
      nets.push({ cidr, net: ipaddr.parseCIDR(cidr) });
    } catch {
      invalid.push(cidr);
    }
  }
  const find = (address: string): string | undefined => {
    const addr = parseStrictIp(address);
    if (!addr) return undefined;
    return nets.find(({ net }) => net[0].kind() === addr.kind() && addr.match(net))?.cidr;
  };
  return {
    cidrs: nets.map((n) => n.cidr),
    invalid,
    match: (cls) =>
      cls.family === null ? undefined : (find(cls.address) ?? (cls.embedded ? find(cls.embedded.address) : undefined)),
  };
}

/** The start-up warnings for a non-empty (or partly invalid) list; empty when there is nothing to say. */
export function allowSubnetsWarnings(allow: AllowSubnets): string[] {
  const out: string[] = [];
  if (allow.cidrs.length > 0) {
    out.push(
      `webhooks.allowSubnets is set: callbacks in ${allow.cidrs.join(", ")} are exempt from the SSRF gate's private_target check (https and the no-redirect rule still apply)`,
    );
  }
  if (allow.invalid.length > 0)
    out.push(
      `webhooks.allowSubnets entries ignored (not CIDR ranges): ${allow.invalid.map((c) => JSON.stringify(c)).join(", ")}`,
    );
  return out;
}
