/**
 * The SSRF gate's decision, without sending anything: https only, every resolved address
 * classified, any blocked answer blocks the target unless `webhooks.allowSubnets` exempts it.
 * Used by the egress client before every request and by `svc webhooks check`.
 */
import { isIP } from "node:net";
import { SvcError } from "../errors.js";
import { allowSubnetsFix } from "./allow-hint.js";
import type { AllowSubnets } from "./allow-subnets.js";
import { classifyAddress, type AddressClass } from "./classify.js";
import type { Resolver } from "./resolver.js";

/** One resolved address and the gate's verdict on it. */
export interface AddressDecision extends AddressClass {
  allowed: boolean;
  /** The `webhooks.allowSubnets` entry that exempted a blocked address. */
  exemptedBy?: string;
}

export interface TargetInspection {
  /** The hostname as in the URL, lower-cased, without IPv6 brackets. */
  hostname: string;
  port: number;
  /** `host[:port]` with a non-default port kept: what error messages and logs name. */
  host: string;
  addresses: AddressDecision[];
  allowed: boolean;
  /** Why the target is blocked (`private_target` or `connect` when nothing resolved). */
  failure?: "private_target" | "connect";
  reason: string;
  /** For a `private_target` block of addresses a user's own receiver may have: the `webhooks.allowSubnets` command that allows them. */
  fix?: string;
}

/**
 * The one callback URL rule (the gate, `svc webhooks check`, webhook creation): anything but a
 * parseable `https:` URL fails `non_https`; a URL carrying credentials fails `invalid_input`.
 */
export function parseHttpsUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new SvcError("non_https", "the callback URL does not parse; an https:// URL is required");
  }
  if (parsed.protocol !== "https:") {
    throw new SvcError(
      "non_https",
      `the callback URL for ${parsed.host || "(no host)"} uses ${parsed.protocol.replace(/:$/, "")}; only https is allowed`,
    );
  }
  if (parsed.username || parsed.password) {
    throw new SvcError(
      "invalid_input",
      `the callback URL for ${parsed.host} must not carry credentials (user:password@); authenticity comes from the signature`,
    );
  }
  return parsed;
}

export function hostnameOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/** What the gate needs: a resolver, the allow list, and optionally a memo of address decisions made under that list. */
export interface GateDeps {
  resolver: Resolver;
  allow: AllowSubnets;
  /** Decisions by address string, valid for this `allow` only (classification is a pure function of both). */
  decisions?: Map<string, AddressDecision>;
}

const MAX_REMEMBERED_DECISIONS = 4096;

function decideAddress(address: string, allow: AllowSubnets): AddressDecision {
  const cls = classifyAddress(address);
  if (!cls.blocked) return { ...cls, allowed: true };
  const exemptedBy = allow.match(cls);
  return exemptedBy ? { ...cls, allowed: true, exemptedBy } : { ...cls, allowed: false };
}

function remember(memo: Map<string, AddressDecision> | undefined, decision: AddressDecision): AddressDecision {
  if (memo) {
    if (memo.size >= MAX_REMEMBERED_DECISIONS) memo.clear();
    memo.set(decision.address, decision);
  }
  return decision;
}

/** Resolves (unless the host is an IP literal) and classifies every address. Never throws for a block. */
export async function inspectTarget(url: URL, deps: GateDeps): Promise<TargetInspection> {
  const hostname = hostnameOf(url);
  const port = url.port === "" ? 443 : Number(url.port);
  const host = url.host;
  const unresolved = (reason: string): TargetInspection => {
    return { hostname, port, host, addresses: [], allowed: false, failure: "connect", reason };
  };
  let answers: string[];
  if (isIP(hostname)) answers = [hostname];
  else {
    try {
      answers = (await deps.resolver.lookupAll(hostname)).map((a) => a.address);
    } catch (err) {
      return unresolved(`${host} does not resolve (${(err as { code?: string }).code ?? "lookup failed"})`);
    }
  }
  if (answers.length === 0) return unresolved(`${host} has no A or AAAA answer`);
  const addresses = answers.map(
    (address) => deps.decisions?.get(address) ?? remember(deps.decisions, decideAddress(address, deps.allow)),
  );
  const blocked = addresses.filter((a) => !a.allowed);
  if (blocked.length === 0) {
    const exempted = addresses.some((a) => a.exemptedBy !== undefined);
    return {
      hostname,
      port,
      host,
      addresses,
      allowed: true,
      reason: `every address is globally reachable${exempted ? " or exempted by webhooks.allowSubnets" : ""}`,
    };
  }
  const first = blocked[0]!;
  const where = isIP(hostname) ? `the address ${first.address}` : `${hostname} resolves to ${first.address}, which`;
  const count = addresses.length > 1 ? ` (${blocked.length} of ${addresses.length} addresses blocked)` : "";
  const fix = allowSubnetsFix(blocked, deps.allow.cidrs);
  return {
    hostname,
    port,
    host,
    addresses,
    allowed: false,
    failure: "private_target",
    reason: `${where} ${first.reason}${count}`,
    ...(fix ? { fix } : {}),
  };
}

/** Like {@link inspectTarget} but throws `private_target` / `connect` (message names the host only). */
export async function admitTarget(url: URL, deps: GateDeps): Promise<TargetInspection> {
  const inspection = await inspectTarget(url, deps);
  if (!inspection.allowed) {
    throw new SvcError(
      inspection.failure ?? "private_target",
      `refused to call ${inspection.host}: ${inspection.reason}${inspection.fix ? `. ${inspection.fix}` : ""}`,
      {
        details: {
          host: inspection.host,
          ...(inspection.fix ? { fix: inspection.fix } : {}),
          addresses: inspection.addresses.map((a) => ({
            address: a.address,
            allowed: a.allowed,
            range: a.range?.cidr ?? null,
          })),
        },
      },
    );
  }
  return inspection;
}
