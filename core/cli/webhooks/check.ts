/**
 * `svc webhooks check <url> [--json]` (loaded lazily by commands/webhooks.ts): the SSRF gate's
 * verdict, offline; then, when the URL is allowed and a daemon runs, the daemon challenges every
 * webhook sentinel suspended by endpoint health that delivers there, and resumes those that answer.
 */
import { readEffectiveConfig } from "../../config/read-effective.js";
import { DaemonClient } from "../daemon-client.js";
import { SvcError } from "../../errors.js";
import { parseAllowSubnets } from "../../egress/allow-subnets.js";
import { inspectTarget, parseHttpsUrl, type AddressDecision } from "../../egress/gate.js";
import { systemResolver, type Resolver } from "../../egress/resolver.js";
import { bold, dim, green, printJson, printTable, println, red, usageError, warn } from "../output.js";

/** The gate's verdict on one URL, as `svc webhooks check` reports it. */
export interface WebhookCheckReport {
  /** `host[:port]` of the URL (never its path or query). */
  host: string;
  allowed: boolean;
  /** The gate's failure reason when blocked: `non_https`, `invalid_input` (credentials in the URL), `private_target` or `connect`. */
  failure: "non_https" | "invalid_input" | "private_target" | "connect" | null;
  reason: string;
  /** For a private_target block of a receiver the user may own: the `svc config set webhooks.allowSubnets …` command that allows it. */
  fix: string | null;
  allowSubnets: string[];
  addresses: AddressDecision[];
}

/** Checks a URL without sending anything; throws `usage` when it does not parse. */
export async function checkWebhookUrl(
  url: string,
  deps: { resolver: Resolver; allowSubnets: string[] },
): Promise<WebhookCheckReport> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw usageError(`${JSON.stringify(url)} is not a URL; expected e.g. https://hooks.example.com/svc`);
  }
  const base = { host: parsed.host, allowSubnets: deps.allowSubnets };
  try {
    parseHttpsUrl(url);
  } catch (err) {
    if (!SvcError.is(err)) throw err;
    return {
      ...base,
      allowed: false,
      failure: err.code === "invalid_input" ? "invalid_input" : "non_https",
      reason: err.message,
      fix: null,
      addresses: [],
    };
  }
  const allow = parseAllowSubnets(deps.allowSubnets);
  const inspection = await inspectTarget(parsed, { resolver: deps.resolver, allow });
  return {
    ...base,
    allowed: inspection.allowed,
    failure: inspection.failure ?? null,
    reason: inspection.reason,
    fix: inspection.fix ?? null,
    addresses: inspection.addresses,
  };
}

/** What the daemon did for the URL's suspended sentinels (`POST /webhooks/check`). */
export interface SuspendedCheck {
  checked: Array<{ sentinelId: string; subscriptionId?: string; resumed: boolean; pending?: number; reason?: string }>;
}

/** Runs the verb; returns the exit code (0 allowed, 1 blocked). */
export async function runWebhooksCheck(url: string, opts: { json: boolean; resolver?: Resolver }): Promise<number> {
  const config = await readEffectiveConfig();
  for (const w of config.warnings) warn(w);
  const allowSubnets = [...(config.effective.webhooks?.allowSubnets ?? [])];
  for (const w of parseAllowSubnets(allowSubnets).invalid)
    warn(`webhooks.allowSubnets entry ${JSON.stringify(w)} is not a CIDR range and is ignored`);
  const report = await checkWebhookUrl(url, { resolver: opts.resolver ?? systemResolver, allowSubnets });
  const suspended = report.allowed ? await checkSuspended(url) : undefined;
  if (opts.json) printJson({ ...report, daemon: suspended ?? null });
  else {
    printReport(report);
    if (suspended) printSuspended(suspended);
  }
  return report.allowed ? 0 : 1;
}

/** Asks the running daemon to challenge the URL's suspended sentinels; `undefined` when no daemon runs (or it could not answer: warned). */
async function checkSuspended(url: string): Promise<SuspendedCheck | undefined> {
  let client: DaemonClient;
  try {
    client = await DaemonClient.connect();
  } catch (err) {
    if (SvcError.is(err) && err.code === "daemon_not_running") return undefined;
    throw err;
  }
  try {
    return await client.request<SuspendedCheck>("POST", "/webhooks/check", { url });
  } catch (err) {
    warn(`the daemon could not check its suspended webhook sentinels for this URL: ${(err as Error).message}`);
    return undefined;
  }
}

function printSuspended(r: SuspendedCheck): void {
  if (r.checked.length === 0) return println(dim("no webhook sentinel delivering to this URL is suspended"));
  for (const c of r.checked) {
    const who = c.sentinelId + (c.subscriptionId ? ` (${c.subscriptionId})` : "");
    if (c.resumed)
      println(
        `${green("resumed")} ${who}: the callback answered the challenge; ${c.pending ?? 0} pending event(s) being sent`,
      );
    else if (c.reason) println(`${red("still suspended")} ${who}: the challenge failed (${c.reason})`);
    else println(`${who}: no longer suspended`);
  }
}

function printReport(r: WebhookCheckReport): void {
  println(
    `${bold(r.host || "(no host)")}${r.allowSubnets.length ? `  (webhooks.allowSubnets: ${r.allowSubnets.join(", ")})` : ""}`,
  );
  if (r.addresses.length > 0) {
    printTable(
      ["ADDRESS", "RANGE", "VERDICT"],
      r.addresses.map((a) => [a.address, rangeText(a), verdictText(a)]),
    );
  }
  println(r.allowed ? `${green("allowed")}: ${r.reason}` : `${red("blocked")} (${r.failure}): ${r.reason}`);
  if (r.fix) println(r.fix);
}

function rangeText(a: AddressDecision): string {
  if (!a.range) return a.family === null ? "not an IP address" : "global unicast";
  const own = `${a.range.cidr} ${a.range.name} (${a.range.rfc})`;
  if (!a.embedded) return own;
  const inner = a.embedded.range ? `${a.embedded.range.cidr} ${a.embedded.range.name}` : "global unicast";
  return `${own}; embeds ${a.embedded.address} (${inner})`;
}

function verdictText(a: AddressDecision): string {
  if (a.exemptedBy) return `allowed (webhooks.allowSubnets ${a.exemptedBy})`;
  return a.allowed ? "allowed" : "blocked";
}
