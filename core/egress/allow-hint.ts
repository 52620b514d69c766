/**
 * The fix the SSRF gate names when it blocks an address a person may well own: a receiver on
 * this machine (loopback), on the LAN (private-use, unique-local, link-local) or on a CGNAT/VPN
 * range. The fix exempts exactly the blocked addresses (`/32`, `/128`), keeping the entries in
 * effect: `svc config set webhooks.allowSubnets '[…]'`. Documentation, multicast, reserved and
 * other ranges get no hint: nobody runs a receiver there.
 */
import type { AddressClass } from "./classify.js";

/** What to call an address in a range a person's own receiver may sit in, by the range's CIDR. */
const OWNABLE: Readonly<Record<string, string>> = {
  "127.0.0.0/8": "a loopback address",
  "::1/128": "a loopback address",
  "10.0.0.0/8": "a private address",
  "172.16.0.0/12": "a private address",
  "192.168.0.0/16": "a private address",
  "fc00::/7": "a private (unique-local) address",
  "100.64.0.0/10": "a shared (CGNAT or VPN) address",
  "169.254.0.0/16": "a link-local address",
  "fe80::/10": "a link-local address",
};

/** The address and class the allow list is matched against: the embedded IPv4 of a mapped form. */
function effective(cls: AddressClass): AddressClass {
  return cls.embedded ?? cls;
}

/**
 * `"127.0.0.1 is a loopback address; to allow your own receiver: svc config set webhooks.allowSubnets '[\"127.0.0.1/32\"]'"`,
 * or `undefined` when any blocked address is not one a receiver of the user's could have.
 */
export function allowSubnetsFix(blocked: readonly AddressClass[], inEffect: readonly string[]): string | undefined {
  if (blocked.length === 0) return undefined;
  const named: string[] = [];
  const cidrs: string[] = [];
  for (const cls of blocked.map(effective)) {
    const kind = cls.range ? OWNABLE[cls.range.cidr] : undefined;
    if (!kind || cls.family === null) return undefined;
    const cidr = `${cls.address}/${cls.family === 4 ? 32 : 128}`;
    if (cidrs.includes(cidr)) continue;
    cidrs.push(cidr);
    named.push(`${cls.address} is ${kind}`);
  }
  const value = JSON.stringify([...inEffect.filter((c) => !cidrs.includes(c)), ...cidrs]);
  return `${named.join(", ")}; to allow your own receiver: svc config set webhooks.allowSubnets '${value}'`;
}
