/**
 * `svc webhooks rm <id|url> [--all] [--json]`: removes webhook sentinels through the daemon's
 * `DELETE /sentinels/:id` (operation sentinel.remove-outbound: the bearer token, which the CLI
 * sends). A URL names every webhook sentinel delivering there; more than one needs `--all`.
 * Listings show a URL with its credentials redacted (core/redaction/url.ts), so a URL is matched in
 * that form: URLs that differ only in their query values (or userinfo) are named together.
 */
import { SvcError } from "../../errors.js";
import { DaemonClient } from "../daemon-client.js";
import { printJson, println, usageError } from "../output.js";
import { REDACTED, redactUrl } from "../../redaction/url.js";
import type { SentinelProjection } from "../../sentinels/service.js";
import { webhookSentinels } from "./list.js";

/** A callback URL as listings show it: the stored form (WHATWG serialization, no fragment), redacted; `undefined` when `text` is no URL. */
function listedFormOf(text: string): string | undefined {
  try {
    const url = new URL(text);
    url.hash = "";
    return redactUrl(url.toString());
  } catch {
    return undefined;
  }
}

/** The webhook sentinels `ref` names: one id, or every one delivering to a URL. */
export function selectWebhooks(ref: string, webhooks: SentinelProjection[], all: boolean): SentinelProjection[] {
  const url = ref.includes("://") ? listedFormOf(ref) : undefined;
  if (url === undefined) {
    const hit = webhooks.find((s) => s.id === ref);
    if (hit) return [hit];
    throw new SvcError(
      "not_found",
      `${ref} is not a webhook sentinel's id; svc webhooks ls lists them (other sentinels: svc sentinel rm)`,
    );
  }
  const hits = webhooks.filter((s) => s.spec.target.url === url);
  if (hits.length === 0)
    throw new SvcError("not_found", `no webhook sentinel delivers to ${url}; svc webhooks ls lists their URLs`);
  if (hits.length > 1 && !all)
    throw usageError(
      `${hits.length} webhook sentinels deliver to ${url} (${hits.map((s) => s.id).join(", ")})${url.includes(REDACTED) || url.includes("***@") ? " as listings show it (query values and userinfo redacted, so URLs that differ only there look alike)" : ""}: give one id, or --all to remove them all`,
    );
  return hits;
}

export async function removeWebhooks(ref: string, opts: { all?: boolean; json?: boolean }): Promise<void> {
  const client = await DaemonClient.connect();
  const chosen = selectWebhooks(ref, await webhookSentinels(client), opts.all === true);
  const removed: string[] = [];
  for (const s of chosen) {
    await client.request("DELETE", `/sentinels/${encodeURIComponent(s.id)}`);
    removed.push(s.id);
    if (!opts.json) println(`removed ${s.id} (delivering to ${String(s.spec.target.url)})`);
  }
  if (opts.json) printJson({ removed });
}
