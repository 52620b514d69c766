import fc from "fast-check";
import ipaddr from "ipaddr.js";
import { describe, expect, it } from "vitest";
import { classifyAddress } from "../../../core/egress/classify.js";
import { IPV4_SPECIAL, IPV6_SPECIAL } from "../../../core/egress/special-ranges.js";

/** An address string inside `cidr`, with the host bits taken from `random`. */
function inRange(cidr: string, random: number[]): string {
  const [net, prefix] = ipaddr.parseCIDR(cidr);
  const bytes = net.toByteArray();
  const out = bytes.map((b, i) => {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    const mask = (0xff << (8 - keep)) & 0xff;
    return (b & mask) | (random[i]! & ~mask & 0xff);
  });
  return ipaddr.fromByteArray(out).toString();
}

const bytes = (n: number) => fc.array(fc.integer({ min: 0, max: 255 }), { minLength: n, maxLength: n });
const ipv4 = bytes(4).map((b) => b.join("."));
const hex16 = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);

describe("classifyAddress: examples", () => {
  it.each([
    ["127.0.0.1", "127.0.0.0/8"],
    ["10.2.3.4", "10.0.0.0/8"],
    ["172.31.255.255", "172.16.0.0/12"],
    ["192.168.1.1", "192.168.0.0/16"],
    ["100.64.0.1", "100.64.0.0/10"],
    ["169.254.169.254", "169.254.0.0/16"],
    ["224.0.0.1", "224.0.0.0/4"],
    ["240.0.0.1", "240.0.0.0/4"],
    ["255.255.255.255", "255.255.255.255/32"],
    ["0.1.2.3", "0.0.0.0/8"],
    ["0.0.0.0", "0.0.0.0/32"],
    ["192.0.2.7", "192.0.2.0/24"],
    ["198.51.100.7", "198.51.100.0/24"],
    ["203.0.113.7", "203.0.113.0/24"],
    ["198.19.0.1", "198.18.0.0/15"],
    ["192.0.0.77", "192.0.0.0/24"],
    ["192.88.99.1", "192.88.99.0/24"],
    ["192.31.196.1", "192.31.196.0/24"],
    ["::1", "::1/128"],
    ["::", "::/128"],
    ["fe80::1", "fe80::/10"],
    ["fd12:3456::1", "fc00::/7"],
    ["fec0::1", "fec0::/10"],
    ["ff02::1", "ff00::/8"],
    ["2001:db8::1", "2001:db8::/32"],
    ["3fff:0fff::1", "3fff::/20"],
    ["2001:2::5", "2001:2::/48"],
    ["100::1", "100::/64"],
    ["2001:20::1", "2001:20::/28"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001::/32"],
    ["64:ff9b:1::808:808", "64:ff9b:1::/48"],
    ["4000::1", "::/0"],
  ])("%s is blocked in %s", (address, cidr) => {
    const c = classifyAddress(address);
    expect(c.blocked).toBe(true);
    expect(c.range?.cidr).toBe(cidr);
    expect(c.reason).toContain(cidr);
  });

  it.each(["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2a00:1450:4001::200e"])(
    "%s is global unicast",
    (address) => {
      expect(classifyAddress(address)).toMatchObject({ blocked: false, range: null, reason: "is global unicast" });
    },
  );

  it.each([
    ["::ffff:127.0.0.1", "127.0.0.1", true],
    ["::ffff:7f00:1", "127.0.0.1", true],
    ["::ffff:8.8.8.8", "8.8.8.8", false],
    ["64:ff9b::10.1.1.1", "10.1.1.1", true],
    ["64:ff9b::808:808", "8.8.8.8", false],
    ["2002:c0a8:0101::1", "192.168.1.1", true],
    ["2002:0808:0808::1", "8.8.8.8", false],
  ])("%s embeds %s (blocked: %s)", (address, inner, blocked) => {
    const c = classifyAddress(address);
    expect(c.embedded?.address).toBe(inner);
    expect(c.blocked).toBe(blocked);
  });

  // Issue 12: ::8.8.8.8 (IPv4-compatible, deprecated) was allowed as if it were 8.8.8.8.
  it.each([
    ["::8.8.8.8", "::/96"],
    ["::10.0.0.1", "::/96"],
    ["::1:0:0:8.8.8.8", "::/8"],
    ["0:ff::1", "::/8"],
    ["::fffe:808:808", "::/8"],
  ])("%s lies in %s, reserved, and is blocked whatever IPv4 it seems to carry", (address, cidr) => {
    const c = classifyAddress(address);
    expect(c.blocked).toBe(true);
    expect(c.range?.cidr).toBe(cidr);
    expect(c.embedded).toBeUndefined();
  });

  it.each([
    "",
    "localhost",
    "127.1",
    "0x7f.0.0.1",
    "0177.0.0.1",
    "2130706433",
    "fe80::1%eth0",
    "[::1]",
    "1.2.3.4.5",
    "::ffff:999.0.0.1",
    "1.2.3.4/32",
  ])("%j does not parse and is blocked", (input) => {
    expect(classifyAddress(input)).toMatchObject({ blocked: true, family: null, range: null });
  });
});

describe("classifyAddress: properties", () => {
  it("every address inside a listed IPv4 range is blocked and named by that range or a narrower one", () => {
    fc.assert(
      fc.property(fc.constantFrom(...IPV4_SPECIAL), bytes(4), (range, random) => {
        const c = classifyAddress(inRange(range.cidr, random));
        const [, prefix] = ipaddr.parseCIDR(range.cidr);
        return c.blocked && c.range !== null && ipaddr.parseCIDR(c.range.cidr)[1] >= prefix;
      }),
      { numRuns: 2000 },
    );
  });

  it("every address inside a listed IPv6 range without an embedded IPv4 is blocked", () => {
    const plain = IPV6_SPECIAL.filter((r) => !r.embeds);
    fc.assert(
      fc.property(
        fc.constantFrom(...plain),
        bytes(16),
        (range, random) => classifyAddress(inRange(range.cidr, random)).blocked,
      ),
      { numRuns: 2000 },
    );
  });

  it("IPv6 outside 2000::/3 is blocked whatever its bits", () => {
    fc.assert(
      fc.property(bytes(16), (random) => {
        const b = [...random];
        if ((b[0]! & 0xe0) === 0x20) b[0] = b[0]! ^ 0x80;
        const address = ipaddr.fromByteArray(b).toString();
        const c = classifyAddress(address);
        return c.embedded ? c.blocked === c.embedded.blocked : c.blocked;
      }),
      { numRuns: 2000 },
    );
  });

  it("IPv4-mapped, NAT64 and 6to4 forms agree with their embedded IPv4; IPv4-compatible is always blocked", () => {
    fc.assert(
      fc.property(ipv4, bytes(4), (v4, tail) => {
        const expected = classifyAddress(v4).blocked;
        const [a, b, c, d] = v4.split(".").map(Number) as [number, number, number, number];
        const forms = [
          `::ffff:${v4}`,
          `::ffff:${hex16(a, b)}:${hex16(c, d)}`,
          `64:ff9b::${v4}`,
          `2002:${hex16(a, b)}:${hex16(c, d)}:${hex16(tail[0]!, tail[1]!)}::${hex16(tail[2]!, tail[3]!)}`,
        ];
        const agree = forms.every(
          (f) => classifyAddress(f).blocked === expected && classifyAddress(f).embedded?.address === v4,
        );
        // The deprecated IPv4-compatible form is reserved (::/8): blocked whatever it carries.
        return agree && classifyAddress(`::${v4}`).blocked && classifyAddress(`::${v4}`).embedded === undefined;
      }),
      { numRuns: 2000 },
    );
  });

  it("local-use NAT64 (64:ff9b:1::/48) is blocked whatever it embeds", () => {
    fc.assert(fc.property(ipv4, (v4) => classifyAddress(`64:ff9b:1::${v4}`).blocked));
  });

  it("lenient and scoped address forms (that resolvers may still connect to) are not addresses: blocked", () => {
    const lenient = fc.oneof(
      fc.tuple(ipv4, fc.nat(3)).map(([v4, i]) =>
        v4
          .split(".")
          .map((o, j) => (j === i ? `0${o}` : o))
          .join("."),
      ),
      fc.tuple(ipv4, fc.nat(3)).map(([v4, i]) =>
        v4
          .split(".")
          .map((o, j) => (j === i ? `0x${Number(o).toString(16)}` : o))
          .join("."),
      ),
      bytes(4).map(([a, b, c, d]) => `${a}.${b}.${(c! << 8) | d!}`),
      bytes(4).map(([a, b, c, d]) => `${a}.${(b! << 16) | (c! << 8) | d!}`),
      bytes(4).map(([a, b, c, d]) => String(((a! << 24) | (b! << 16) | (c! << 8) | d!) >>> 0)),
      ipv4.map((v4) => `${v4}.`),
      fc.tuple(ipv4, fc.constantFrom(" ", "\t", "\n")).map(([v4, ws]) => `${ws}${v4}`),
      fc.tuple(ipv4, fc.constantFrom(" ", "\t", "\n")).map(([v4, ws]) => `${v4}${ws}`),
      fc.tuple(bytes(2), fc.constantFrom("eth0", "1", "lo")).map(([[a, b], zone]) => `fe80::${hex16(a!, b!)}%${zone}`),
      fc.tuple(ipv4, fc.constantFrom("eth0", "1")).map(([v4, zone]) => `::ffff:${v4}%${zone}`),
    );
    fc.assert(
      fc.property(lenient, (s) => {
        expect(classifyAddress(s)).toMatchObject({ family: null, blocked: true, range: null });
      }),
      { numRuns: 2000 },
    );
  });
});
