/**
 * The one egress path for outbound HTTPS (webhook callbacks, any target's POST). Every request
 * passes the SSRF gate (https only, every resolved address validated), then connects through a
 * `lookup` that returns only the validated addresses (no second DNS lookup, no rebinding window)
 * while the URL's hostname stays in use for SNI, certificate verification and the `Host` header.
 * Redirects are never followed; bodies are clamped to {@link MAX_BODY_BYTES}.
 */
import type { LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import type { Agent } from "undici";
import { SvcError } from "../errors.js";
import { EGRESS_MAX_BODY_BYTES, type Egress, type EgressFailure, type EgressResponse } from "../plugin-api/egress.js";
import type { Logger } from "../runtime/logger.js";
import { allowSubnetsWarnings, parseAllowSubnets } from "./allow-subnets.js";
import { mapEgressError } from "./egress-errors.js";
import { exchange } from "./exchange.js";
import { admitTarget, hostnameOf, parseHttpsUrl, type AddressDecision, type TargetInspection } from "./gate.js";
import { systemResolver, type Resolver } from "./resolver.js";

/** Request and read-response body limit: 256 KiB (defined in the plugin API, which promises it). */
export const MAX_BODY_BYTES = EGRESS_MAX_BODY_BYTES;

export type { Egress, EgressFailure, EgressResponse };

const MAX_REMEMBERED_HOSTS = 1024;

/**
 * Creates the egress client. With a logger, a non-empty `allowSubnets` is logged as a warning at
 * creation (the host egress builds one at daemon start and again when the list changes).
 */
export function createEgress(
  options: { allowSubnets?: readonly string[]; resolver?: Resolver; logger?: Logger } = {},
): Egress {
  const allow = parseAllowSubnets(options.allowSubnets ?? []);
  for (const warning of allowSubnetsWarnings(allow)) options.logger?.warn(warning);
  const resolver = options.resolver ?? systemResolver;
  const validated = new Map<string, LookupAddress[]>();
  const gate = { resolver, allow, decisions: new Map<string, AddressDecision>() };

  const lookup: LookupFunction = (hostname, opts, callback) => {
    const family = familyNumber(opts.family);
    const answers = (validated.get(hostname.toLowerCase()) ?? []).filter((a) => family === 0 || a.family === family);
    if (answers.length === 0) {
      const err: NodeJS.ErrnoException = Object.assign(new Error(`no validated address for ${hostname}`), {
        code: "ENOTFOUND",
      });
      return callback(err, opts.all ? [] : "", 0);
    }
    if (opts.all) callback(null, answers);
    else callback(null, answers[0]!.address, answers[0]!.family);
  };

  // A connection not made in 15 s (the longest attempt) is given up: a request that timed out
  // before its connection was made does not keep a connect attempt alive after it.
  // undici (about 18 MiB of RSS) loads at the first post, not when the daemon starts.
  let agent: Agent | undefined;
  let loading: Promise<Agent> | undefined;
  const loadAgent = (): Promise<Agent> =>
    (loading ??= import("undici").then(
      ({ Agent }) => (agent = new Agent({ connect: { lookup, timeout: 15_000 }, keepAliveTimeout: 4_000 })),
    ));

  const remember = (hostname: string, decisions: readonly AddressDecision[]): void => {
    const known = validated.get(hostname);
    if (known && known.length === decisions.length && known.every((a, i) => a.address === decisions[i]!.address))
      return;
    validated.delete(hostname);
    validated.set(
      hostname,
      decisions.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })),
    );
    if (validated.size > MAX_REMEMBERED_HOSTS) validated.delete(validated.keys().next().value!);
  };
  /**
   * Admitted IP-literal hosts (the last {@link MAX_REMEMBERED_HOSTS}): no name is resolved, so the
   * gate's answer cannot change for this egress (its allow list is fixed). Names are admitted, and
   * resolved, again on every request.
   */
  const admittedLiterals = new Map<string, TargetInspection>();
  const admitLiteral = (host: string, inspection: TargetInspection): TargetInspection => {
    if (admittedLiterals.size >= MAX_REMEMBERED_HOSTS) admittedLiterals.clear();
    admittedLiterals.set(host, inspection);
    return inspection;
  };
  /** Parsed callback URLs (the last {@link MAX_REMEMBERED_HOSTS}): a dispatcher posts to the same few again and again. */
  const urls = new Map<string, URL>();
  const parse = (url: string): URL => {
    let parsed = urls.get(url);
    if (!parsed) {
      parsed = parseHttpsUrl(url);
      if (urls.size >= MAX_REMEMBERED_HOSTS) urls.clear();
      urls.set(url, parsed);
    }
    return parsed;
  };

  return {
    async post(url, init) {
      const parsed = parse(url);
      const host = parsed.host;
      const body = typeof init.body === "string" ? Buffer.from(init.body, "utf8") : init.body;
      if (body.length > MAX_BODY_BYTES) {
        throw new SvcError(
          "payload_too_large",
          `refused to send ${body.length} bytes to ${host}: the limit is ${MAX_BODY_BYTES} bytes`,
        );
      }
      const timedOut = () => new SvcError("timeout", `${host} did not answer within ${init.timeoutMs} ms`);
      const started = performance.now();
      try {
        // Only a name lookup can take time here; an IP literal is decided without waiting, and
        // its admission (a pure function of the address and the allow list) is kept.
        const literal = admittedLiterals.get(parsed.host);
        const inspection =
          literal ??
          (isIP(hostnameOf(parsed))
            ? admitLiteral(parsed.host, await admitTarget(parsed, gate))
            : await withTimeout(admitTarget(parsed, gate), init.timeoutMs, timedOut));
        remember(inspection.hostname, inspection.addresses);
        const headers: Record<string, string> = {};
        for (const name in init.headers) if (name.toLowerCase() !== "host") headers[name] = init.headers[name]!;
        const res = await exchange(agent ?? (await loadAgent()), {
          origin: parsed.origin,
          path: parsed.pathname + parsed.search,
          headers,
          body,
          timeoutMs: Math.max(1, init.timeoutMs - (performance.now() - started)),
          timedOut,
          limit: MAX_BODY_BYTES,
          check: (status, responseHeaders) => {
            if (
              status >= 300 &&
              status < 400 &&
              responseHeaders.location !== undefined &&
              !isHttpsLocation(responseHeaders.location, parsed)
            ) {
              throw new SvcError(
                "redirect",
                `${host} answered ${status} redirecting to a non-https location; redirects are never followed`,
              );
            }
          },
        });
        options.logger?.debug("egress response", { host, status: res.status, truncated: res.truncated });
        return res;
      } catch (err) {
        const mapped = mapEgressError(err, host);
        options.logger?.debug("egress failure", { host, code: mapped.code });
        throw mapped;
      }
    },
    async close() {
      await (agent ?? (loading ? await loading : undefined))?.close();
    },
  };
}

function familyNumber(family: number | "IPv4" | "IPv6" | undefined): 0 | 4 | 6 {
  if (family === 4 || family === "IPv4") return 4;
  if (family === 6 || family === "IPv6") return 6;
  return 0;
}

function isHttpsLocation(location: string, base: URL): boolean {
  try {
    return new URL(location, base).protocol === "https:";
  } catch {
    return false;
  }
}

/** `promise`, or `timedOut()` thrown once `ms` pass first. */
function withTimeout<T>(promise: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(timedOut()), ms)));
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
