/**
 * The IANA IPv4 and IPv6 Special-Purpose Address Registries (plus the multicast, reserved and
 * deprecated blocks of the address-space registries), as data. Every range here is blocked by
 * the SSRF gate, except the translation forms marked `embeds`, whose verdict is the embedded
 * IPv4 address's.
 */
export interface SpecialRange {
  cidr: string;
  name: string;
  rfc: string;
  /** Where an IPv4 address sits inside this IPv6 range, when the verdict follows that IPv4. */
  embeds?: "last32" | "6to4";
}

export const IPV4_SPECIAL: readonly SpecialRange[] = [
  { cidr: "0.0.0.0/8", name: "This network", rfc: "RFC 791" },
  { cidr: "0.0.0.0/32", name: "This host on this network", rfc: "RFC 1122" },
  { cidr: "10.0.0.0/8", name: "Private-Use", rfc: "RFC 1918" },
  { cidr: "100.64.0.0/10", name: "Shared Address Space (CGNAT)", rfc: "RFC 6598" },
  { cidr: "127.0.0.0/8", name: "Loopback", rfc: "RFC 1122" },
  { cidr: "169.254.0.0/16", name: "Link Local", rfc: "RFC 3927" },
  { cidr: "172.16.0.0/12", name: "Private-Use", rfc: "RFC 1918" },
  { cidr: "192.0.0.0/24", name: "IETF Protocol Assignments", rfc: "RFC 6890" },
  { cidr: "192.0.0.0/29", name: "IPv4 Service Continuity Prefix", rfc: "RFC 7335" },
  { cidr: "192.0.0.8/32", name: "IPv4 dummy address", rfc: "RFC 7600" },
  { cidr: "192.0.0.9/32", name: "Port Control Protocol Anycast", rfc: "RFC 7723" },
  { cidr: "192.0.0.10/32", name: "Traversal Using Relays around NAT Anycast", rfc: "RFC 8155" },
  { cidr: "192.0.0.170/32", name: "NAT64/DNS64 Discovery", rfc: "RFC 8880" },
  { cidr: "192.0.0.171/32", name: "NAT64/DNS64 Discovery", rfc: "RFC 8880" },
  { cidr: "192.0.2.0/24", name: "Documentation (TEST-NET-1)", rfc: "RFC 5737" },
  { cidr: "192.31.196.0/24", name: "AS112-v4", rfc: "RFC 7535" },
  { cidr: "192.52.193.0/24", name: "AMT", rfc: "RFC 7450" },
  { cidr: "192.88.99.0/24", name: "Deprecated (6to4 Relay Anycast)", rfc: "RFC 7526" },
  { cidr: "192.88.99.2/32", name: "6a44-relay anycast address", rfc: "RFC 6751" },
  { cidr: "192.168.0.0/16", name: "Private-Use", rfc: "RFC 1918" },
  { cidr: "192.175.48.0/24", name: "Direct Delegation AS112 Service", rfc: "RFC 7534" },
  { cidr: "198.18.0.0/15", name: "Benchmarking", rfc: "RFC 2544" },
  { cidr: "198.51.100.0/24", name: "Documentation (TEST-NET-2)", rfc: "RFC 5737" },
  { cidr: "203.0.113.0/24", name: "Documentation (TEST-NET-3)", rfc: "RFC 5737" },
  { cidr: "224.0.0.0/4", name: "Multicast", rfc: "RFC 5771" },
  { cidr: "240.0.0.0/4", name: "Reserved (future use)", rfc: "RFC 1112" },
  { cidr: "255.255.255.255/32", name: "Limited Broadcast", rfc: "RFC 919" },
];

export const IPV6_SPECIAL: readonly SpecialRange[] = [
  { cidr: "::/128", name: "Unspecified Address", rfc: "RFC 4291" },
  { cidr: "::1/128", name: "Loopback Address", rfc: "RFC 4291" },
  // ::/8 is "Reserved by IETF" in the IANA IPv6 Address Space registry. The deprecated
  // IPv4-compatible form ::/96 lies in it and is blocked whatever IPv4 it seems to carry (no stack
  // routes it as IPv4); only the IPv4-mapped form below takes its embedded address's verdict.
  { cidr: "::/8", name: "Reserved by IETF", rfc: "RFC 4291" },
  { cidr: "::/96", name: "IPv4-Compatible (deprecated)", rfc: "RFC 4291" },
  { cidr: "::ffff:0:0/96", name: "IPv4-mapped Address", rfc: "RFC 4291", embeds: "last32" },
  { cidr: "64:ff9b::/96", name: "IPv4-IPv6 Translation (NAT64)", rfc: "RFC 6052", embeds: "last32" },
  { cidr: "64:ff9b:1::/48", name: "IPv4-IPv6 Translation (local-use NAT64)", rfc: "RFC 8215" },
  { cidr: "100::/64", name: "Discard-Only Address Block", rfc: "RFC 6666" },
  { cidr: "100:0:0:1::/64", name: "Dummy IPv6 Prefix", rfc: "RFC 9780" },
  { cidr: "2001::/23", name: "IETF Protocol Assignments", rfc: "RFC 2928" },
  { cidr: "2001::/32", name: "TEREDO", rfc: "RFC 4380" },
  { cidr: "2001:1::1/128", name: "Port Control Protocol Anycast", rfc: "RFC 7723" },
  { cidr: "2001:1::2/128", name: "Traversal Using Relays around NAT Anycast", rfc: "RFC 8155" },
  { cidr: "2001:1::3/128", name: "DNS-SD Service Registration Protocol Anycast", rfc: "RFC 9665" },
  { cidr: "2001:2::/48", name: "Benchmarking", rfc: "RFC 5180" },
  { cidr: "2001:3::/32", name: "AMT", rfc: "RFC 7450" },
  { cidr: "2001:4:112::/48", name: "AS112-v6", rfc: "RFC 7535" },
  { cidr: "2001:10::/28", name: "Deprecated (previously ORCHID)", rfc: "RFC 4843" },
  { cidr: "2001:20::/28", name: "ORCHIDv2", rfc: "RFC 7343" },
  { cidr: "2001:30::/28", name: "Drone Remote ID Protocol Entity Tags (DETs) Prefix", rfc: "RFC 9374" },
  { cidr: "2001:db8::/32", name: "Documentation", rfc: "RFC 3849" },
  { cidr: "2002::/16", name: "6to4", rfc: "RFC 3056", embeds: "6to4" },
  { cidr: "2620:4f:8000::/48", name: "Direct Delegation AS112 Service", rfc: "RFC 7534" },
  { cidr: "3fff::/20", name: "Documentation", rfc: "RFC 9637" },
  { cidr: "5f00::/16", name: "Segment Routing (SRv6) SIDs", rfc: "RFC 9602" },
  { cidr: "fc00::/7", name: "Unique-Local", rfc: "RFC 4193" },
  { cidr: "fe80::/10", name: "Link-Local Unicast", rfc: "RFC 4291" },
  { cidr: "fec0::/10", name: "Site-Local (deprecated)", rfc: "RFC 3879" },
  { cidr: "ff00::/8", name: "Multicast", rfc: "RFC 4291" },
];

/** IPv6 outside 2000::/3 and outside every range above is unallocated ("Reserved by IETF"). */
export const IPV6_GLOBAL_UNICAST: SpecialRange = { cidr: "2000::/3", name: "Global Unicast", rfc: "RFC 4291" };
export const IPV6_RESERVED: SpecialRange = {
  cidr: "::/0",
  name: "Reserved by IETF (outside 2000::/3)",
  rfc: "RFC 4291",
};
