/** `svc sentinel list|status|providers`: read views from the daemon. */
import { DaemonClient } from "../daemon-client.js";
import { dim, printJson, println, printTable } from "../output.js";
import type { ProviderReport, SentinelProjection, SentinelStatus } from "../../sentinels/service.js";

export function formatUntil(until: SentinelProjection["spec"]["until"]): string {
  switch (until.kind) {
    case "count":
      return `count:${until.n}`;
    case "at":
      return `at:${new Date(until.ms).toISOString()}`;
    default:
      return until.kind;
  }
}

const subjects = (s: SentinelProjection) =>
  s.spec.match.map((m) => m.subject + (m.types ? ` [${m.types.join(",")}]` : "")).join(" | ");
const target = (s: SentinelProjection) => {
  const { kind, ...rest } = s.spec.target;
  const main = rest.sessionId ?? rest.url ?? rest.routineId ?? rest.name;
  const sub = typeof rest.subscriptionId === "string" ? ` [${rest.subscriptionId}]` : "";
  return (main === undefined ? String(kind) : `${String(kind)}:${String(main)}`) + sub;
};

/** A webhook target's `deliveryStatus` (endpoint health), when the target has one. */
interface DeliveryStatus {
  active: boolean;
  reason?: string;
  since?: string;
  lastDeliveryAt?: string;
  lastError?: string | null;
}
const deliveryOf = (s: SentinelProjection) => (s.spec.target as { deliveryStatus?: DeliveryStatus }).deliveryStatus;
const statusCell = (s: SentinelProjection) =>
  deliveryOf(s)?.active === false ? `${s.status} (delivery suspended)` : s.status;

function deliveryLine(s: SentinelProjection): string | undefined {
  const d = deliveryOf(s);
  if (!d) return undefined;
  const last = d.lastDeliveryAt ? `last delivery ${d.lastDeliveryAt}` : "";
  if (d.active) return ["active", last, d.lastError ? `last error ${d.lastError}` : ""].filter(Boolean).join(", ");
  return `SUSPENDED since ${d.since} (${d.reason}, last error ${d.lastError}${last ? `, ${last}` : ""}): new events wait as pending; svc sentinel resume ${s.id} sends them`;
}

interface OutboxCounts {
  pending: number;
  delivered: number;
  dead: number;
}

const outboxOf = (s: SentinelStatus): OutboxCounts | undefined =>
  (s.target as { outbox?: OutboxCounts } | undefined)?.outbox;

/**
 * The DELIVERED column: events the target actually delivered. `deliveredCount` counts events the
 * target accepted (what `until: count` counts); for a webhook target that includes rows still
 * pending or dead, so its cell is the outbox's delivered rows, with the others beside them.
 */
function deliveredCell(s: SentinelProjection, counts: OutboxCounts | undefined): string {
  if (!counts) return String(s.deliveredCount);
  const rest = [counts.pending && `${counts.pending} pending`, counts.dead && `${counts.dead} dead`].filter(Boolean);
  return rest.length ? `${counts.delivered} (${rest.join(", ")})` : String(counts.delivered);
}

export async function list(json: boolean): Promise<void> {
  const client = await DaemonClient.connect();
  const { sentinels } = await client.request<{ sentinels: SentinelProjection[] }>("GET", "/sentinels");
  if (json) return printJson({ sentinels });
  if (!sentinels.length) return println(dim("no sentinels; create one with `svc sentinel watch`"));
  const counts = await Promise.all(
    sentinels.map(async (s) =>
      s.spec.target.kind === "webhook"
        ? outboxOf(await client.request<SentinelStatus>("GET", `/sentinels/${encodeURIComponent(s.id)}`))
        : undefined,
    ),
  );
  printTable(
    ["ID", "STATUS", "PROVIDER", "MATCH", "UNTIL", "TARGET", "DELIVERED", "LABEL"],
    sentinels.map((s, i) => [
      s.id,
      statusCell(s),
      s.spec.provider,
      subjects(s),
      formatUntil(s.spec.until),
      target(s),
      deliveredCell(s, counts[i]),
      s.spec.label,
    ]),
  );
}

const iso = (ms: unknown) => (typeof ms === "number" ? new Date(ms).toISOString() : "");

interface StatusRow {
  eventId: string;
  status: string;
  deadReason?: string;
  attempts: number;
  lastError: string | null;
  lastAt: number | null;
  createdAt: number;
  replays?: number;
}

export async function status(id: string, json: boolean): Promise<void> {
  const s = await (await DaemonClient.connect()).request<SentinelStatus>("GET", `/sentinels/${encodeURIComponent(id)}`);
  if (json) return printJson(s);
  const rows: Array<[string, unknown]> = [
    ["id", s.id],
    ["status", s.status + (s.endedReason ? ` (${s.endedReason} at ${new Date(s.endedAt ?? 0).toISOString()})` : "")],
    ["provider", s.spec.provider],
    ["match", subjects(s)],
    ["until", formatUntil(s.spec.until)],
    ["target", JSON.stringify(s.spec.target)],
    ["delivery", deliveryLine(s)],
    ["accepted", s.deliveredCount],
    ["label", s.spec.label],
    ["group", s.spec.group],
    ["created", new Date(s.createdAt).toISOString()],
    ["updated", new Date(s.updatedAt).toISOString()],
  ];
  for (const [k, v] of rows) if (v !== undefined) println(`${k.padEnd(10)} ${String(v)}`);
  const t = s.target as { outbox?: OutboxCounts & { rows?: StatusRow[] }; rotatedAt?: number } | undefined;
  if (t?.outbox) {
    const { delivered, pending, dead, rows: outboxRows = [] } = t.outbox;
    println(`outbox     ${delivered} delivered, ${pending} pending, ${dead} dead`);
    if (t.rotatedAt) println(`rotated    ${iso(t.rotatedAt)}`);
    if (outboxRows.length === 0) return;
    println("");
    printTable(
      ["EVENT", "STATUS", "ATTEMPTS", "LAST ATTEMPT", "CREATED", "LAST ERROR"],
      outboxRows.map((r) => [
        r.eventId,
        r.status + (r.deadReason ? ` (${r.deadReason})` : "") + (r.replays ? `, replayed ${r.replays}x` : ""),
        r.attempts,
        iso(r.lastAt),
        iso(r.createdAt),
        r.lastError ?? "",
      ]),
    );
  } else if (t) {
    println("target status:");
    for (const line of JSON.stringify(t, null, 2).split("\n")) println(`  ${line}`);
  }
}

export async function providers(json: boolean): Promise<void> {
  const { providers: list } = await (await DaemonClient.connect()).request<{ providers: ProviderReport[] }>(
    "GET",
    "/sentinel-providers",
  );
  if (json) return printJson({ providers: list });
  printTable(
    ["PROVIDER", "READY", "DETAIL"],
    list.map((p) => [p.kind, p.readiness.ready ? "yes" : "no", p.readiness.detail]),
  );
}
