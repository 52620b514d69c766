/**
 * `webhooks.allowSubnets`: CIDR ranges exempted from `private_target` (for a receiver on the
 * user's own machine). It never relaxes https or redirects.
 */
import ipaddr from "ipaddr.js";
import { SvcError } from "../../../core/plugin-api/index.js";
import { parseStrictIp, type AddressClass } from "./classify.js";

export interface AllowSubnets {
  readonly cidrs: readonly string[];
  /** The configured CIDR that exempts this address (or its embedded IPv4), if any. */
  match(cls: AddressClass): string | undefined;
}

/** Parses the list; an entry that is not a CIDR range is an `invalid_input` error naming it. */
export function parseAllowSubnets(cidrs: readonly string[] = []): AllowSubnets {
  const nets = cidrs.map((cidr) => {
    try {
      return { cidr, net: ipaddr.parseCIDR(cidr) };
    } catch {
      throw new SvcError("invalid_input", `webhooks.allowSubnets entry ${JSON.stringify(cidr)} is not a CIDR range (e.g. 127.0.0.0/8 or ::1/128)`);
    }
  });
  const find = (address: string): string | undefined => {
    const addr = parseStrictIp(address);
    if (!addr) return undefined;
    return nets.find(({ net }) => net[0].kind() === addr.kind() && addr.match(net))?.cidr;
  };
  return {
    cidrs: [...cidrs],
    match: (cls) => (cls.family === null ? undefined : find(cls.address) ?? (cls.embedded ? find(cls.embedded.address) : undefined)),
  };
}
