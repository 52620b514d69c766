/**
 * Address classification against the IANA special-purpose registries (see special-ranges.ts).
 * Parsing and range matching use ipaddr.js; an input must first be an IP address by Node's own
 * parser (`net.isIP`), so lenient forms such as `127.1` or `0x7f.1` are not addresses here.
 */
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { IPV4_SPECIAL, IPV6_GLOBAL_UNICAST, IPV6_RESERVED, IPV6_SPECIAL, type SpecialRange } from "./special-ranges.js";

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

/** The registry range an address falls in. */
export interface RangeRef {
  cidr: string;
  name: string;
  rfc: string;
}

/** What the registries say about one address. */
export interface AddressClass {
  /** The address as given. */
  address: string;
  family: 4 | 6 | null;
  /** True when the address is not globally reachable (or not an address at all). */
  blocked: boolean;
  /** The most specific registry range it falls in; `null` for global unicast. */
  range: RangeRef | null;
  /** For IPv4-mapped, IPv4-compatible, NAT64 and 6to4 forms: the embedded IPv4 address's class. */
  embedded?: AddressClass;
  /** One line: why it is blocked or allowed. */
  reason: string;
}

interface CompiledRange extends SpecialRange {
  net: [IPv4 | IPv6, number];
}

const compile = (list: readonly SpecialRange[]): CompiledRange[] =>
  list.map((r) => ({ ...r, net: ipaddr.parseCIDR(r.cidr) }));
const V4 = compile(IPV4_SPECIAL);
const V6 = compile(IPV6_SPECIAL);
const V6_GLOBAL = ipaddr.parseCIDR(IPV6_GLOBAL_UNICAST.cidr);

const ref = (r: SpecialRange): RangeRef => ({ cidr: r.cidr, name: r.name, rfc: r.rfc });
const describe = (r: SpecialRange): string => `${r.cidr} ${r.name} (${r.rfc})`;

/** Parses a strict IP address string (no zone id, no lenient IPv4 forms); `null` when it is not one. */
export function parseStrictIp(input: string): IPv4 | IPv6 | null {
  const family = isIP(input);
  if (family === 4) return ipaddr.IPv4.parse(input);
  if (family !== 6 || input.includes("%")) return null;
  // ipaddr.js reads "::a.b.c.d" as IPv4-mapped; rewrite a dotted tail as two hex groups first.
  const hexTail = input.replace(
    /(\d+)\.(\d+)\.(\d+)\.(\d+)$/,
    (_m, a, b, c, d) => `${((+a << 8) | +b).toString(16)}:${((+c << 8) | +d).toString(16)}`,
  );
  return ipaddr.IPv6.parse(hexTail);
}

function mostSpecific(addr: IPv4 | IPv6, table: CompiledRange[]): CompiledRange | undefined {
  let best: CompiledRange | undefined;
  for (const r of table) {
    if (addr.kind() !== r.net[0].kind()) continue;
    if (addr.match(r.net) && (!best || r.net[1] > best.net[1])) best = r;
  }
  return best;
}

function embeddedIpv4(addr: IPv6, where: "last32" | "6to4"): IPv4 {
  const b = addr.toByteArray();
  return new ipaddr.IPv4(where === "last32" ? b.slice(12, 16) : b.slice(2, 6));
}

function classifyParsed(input: string, addr: IPv4 | IPv6): AddressClass {
  if (addr.kind() === "ipv4") {
    const hit = mostSpecific(addr, V4);
    if (!hit) return { address: input, family: 4, blocked: false, range: null, reason: "is global unicast" };
    return { address: input, family: 4, blocked: true, range: ref(hit), reason: `falls in ${describe(hit)}` };
  }
  const v6 = addr as IPv6;
  const hit = mostSpecific(v6, V6);
  if (hit?.embeds) {
    const inner4 = embeddedIpv4(v6, hit.embeds);
    const embedded = classifyParsed(inner4.toString(), inner4);
    const reason = `embeds IPv4 ${embedded.address} (${describe(hit)}), which ${embedded.reason}`;
    return { address: input, family: 6, blocked: embedded.blocked, range: ref(hit), embedded, reason };
  }
  if (hit) return { address: input, family: 6, blocked: true, range: ref(hit), reason: `falls in ${describe(hit)}` };
  if (!v6.match(V6_GLOBAL)) {
    return {
      address: input,
      family: 6,
      blocked: true,
      range: ref(IPV6_RESERVED),
      reason: `falls in ${describe(IPV6_RESERVED)}`,
    };
  }
  return { address: input, family: 6, blocked: false, range: null, reason: "is global unicast" };
}

/**
 * Classifies one address string. Anything that is not a strict IPv4 or IPv6 address (including
 * scoped `fe80::1%eth0` forms) is blocked.
 * @example classifyAddress("10.1.2.3").range?.cidr // "10.0.0.0/8"
 */
export function classifyAddress(input: string): AddressClass {
  const addr = parseStrictIp(input);
  if (!addr) return { address: input, family: null, blocked: true, range: null, reason: "is not an IP address" };
  return classifyParsed(input, addr);
}
