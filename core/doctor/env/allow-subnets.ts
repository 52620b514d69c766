/**
 * Webhook sentinels the SSRF gate will refuse: an active sentinel whose callback host is a
 * private, loopback or other special-purpose address not covered by `webhooks.allowSubnets` gets
 * `private_target` at each delivery. Offline: IP literals, and `localhost` names (RFC 6761: always
 * loopback, 127.0.0.1 and ::1); other names are not resolved (that would ask DNS).
 */
import { parseAllowSubnets } from "../../egress/allow-subnets.js";
import { inspectTarget } from "../../egress/gate.js";
import type { Resolver } from "../../egress/resolver.js";
import type { SentinelView } from "../../plugin-api/context.js";
import type { DoctorFinding } from "../../plugin-api/doctor.js";

const offline: Resolver = {
  async lookupAll(hostname) {
    const h = hostname.toLowerCase().replace(/\.$/, "");
    if (h === "localhost" || h.endsWith(".localhost"))
      return [
        { address: "127.0.0.1", family: 4 },
        { address: "::1", family: 6 },
      ];
    return [];
  },
};

export async function checkAllowSubnets(
  sentinels: SentinelView[],
  allowSubnets: readonly string[],
): Promise<DoctorFinding[]> {
  const allow = parseAllowSubnets(allowSubnets);
  const out: DoctorFinding[] = [];
  for (const s of sentinels) {
    const target = s.spec.target;
    if (s.status !== "active" || target.kind !== "webhook" || typeof target.url !== "string") continue;
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      continue;
    }
    const inspection = await inspectTarget(url, { resolver: offline, allow });
    if (inspection.allowed || inspection.failure !== "private_target") continue;
    const blocked = inspection.addresses
      .filter((a) => !a.allowed)
      .map((a) => `${a.address}/${a.family === 6 ? 128 : 32}`);
    const list = JSON.stringify([...allowSubnets, ...blocked]);
    out.push({
      severity: "warn",
      file: "sentinels.json",
      message: `webhook sentinel ${s.id} delivers to ${inspection.host}, which the SSRF gate refuses (private_target): ${inspection.reason}; not covered by webhooks.allowSubnets`,
      fix: `if that receiver is yours, allow it: svc config set webhooks.allowSubnets '${list}' (docs/ssrf-gate.md); else remove the sentinel (svc sentinel unwatch ${s.id})`,
    });
  }
  return out;
}
