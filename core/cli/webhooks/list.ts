/**
 * `svc webhooks ls [--json]`: the webhook sentinels (what `svc webhooks add` creates, and MCP
 * events subscriptions, which are webhook sentinels too), with their callback and delivery state.
 * Secrets are never part of a projection; the target shows `hasSecret` only.
 */
import { DaemonClient } from "../daemon-client.js";
import { dim, printJson, println, printTable } from "../output.js";
import { formatUntil } from "../sentinel/show.js";
import type { SentinelProjection } from "../../sentinels/service.js";

/** A webhook target's projection fields that the listing shows. */
interface WebhookView {
  url?: string;
  subscriptionId?: string;
  deliveryStatus?: { active: boolean; lastError?: string | null };
}

const viewOf = (s: SentinelProjection) => s.spec.target as WebhookView;

/** Every sentinel whose target is a webhook, as the daemon projects it. */
export async function webhookSentinels(client: DaemonClient): Promise<SentinelProjection[]> {
  const { sentinels } = await client.request<{ sentinels: SentinelProjection[] }>("GET", "/sentinels");
  return sentinels.filter((s) => s.spec.target.kind === "webhook");
}

function deliveryCell(s: SentinelProjection): string {
  const d = viewOf(s).deliveryStatus;
  if (!d) return "";
  if (!d.active) return `suspended (${d.lastError ?? "failing"})`;
  return d.lastError ? `active (last error ${d.lastError})` : "active";
}

export async function listWebhooks(json: boolean): Promise<void> {
  const webhooks = await webhookSentinels(await DaemonClient.connect());
  if (json) return printJson({ webhooks });
  if (!webhooks.length)
    return println(dim("no webhook sentinels; create one with `svc webhooks add <url> --subject <subject>`"));
  printTable(
    ["ID", "STATUS", "URL", "MATCH", "UNTIL", "DELIVERY", "LABEL"],
    webhooks.map((s) => [
      s.id + (viewOf(s).subscriptionId ? ` [${viewOf(s).subscriptionId}]` : ""),
      s.status,
      viewOf(s).url ?? "",
      s.spec.match.map((m) => m.subject).join(" | "),
      formatUntil(s.spec.until),
      deliveryCell(s),
      s.spec.label ?? "",
    ]),
  );
}
