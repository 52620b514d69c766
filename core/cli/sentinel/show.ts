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

const subjects = (s: SentinelProjection) => s.spec.match.map((m) => m.subject + (m.types ? ` [${m.types.join(",")}]` : "")).join(" | ");
const target = (s: SentinelProjection) => {
  const { kind, ...rest } = s.spec.target;
  const main = rest.sessionId ?? rest.url ?? rest.routineId ?? rest.name;
  return main === undefined ? String(kind) : `${String(kind)}:${String(main)}`;
};

export async function list(json: boolean): Promise<void> {
  const { sentinels } = await (await DaemonClient.connect()).request<{ sentinels: SentinelProjection[] }>("GET", "/sentinels");
  if (json) return printJson({ sentinels });
  if (!sentinels.length) return println(dim("no sentinels; create one with `svc sentinel watch`"));
  printTable(
    ["ID", "STATUS", "PROVIDER", "MATCH", "UNTIL", "TARGET", "DELIVERED", "LABEL"],
    sentinels.map((s) => [s.id, s.status, s.spec.provider, subjects(s), formatUntil(s.spec.until), target(s), s.deliveredCount, s.spec.label]),
  );
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
    ["delivered", s.deliveredCount],
    ["label", s.spec.label],
    ["group", s.spec.group],
    ["created", new Date(s.createdAt).toISOString()],
    ["updated", new Date(s.updatedAt).toISOString()],
  ];
  for (const [k, v] of rows) if (v !== undefined) println(`${k.padEnd(10)} ${String(v)}`);
  if (s.target) {
    println("target status:");
    for (const line of JSON.stringify(s.target, null, 2).split("\n")) println(`  ${line}`);
  }
}

export async function providers(json: boolean): Promise<void> {
  const { providers: list } = await (await DaemonClient.connect()).request<{ providers: ProviderReport[] }>("GET", "/sentinel-providers");
  if (json) return printJson({ providers: list });
  printTable(["PROVIDER", "READY", "DETAIL"], list.map((p) => [p.kind, p.readiness.ready ? "yes" : "no", p.readiness.detail]));
}
