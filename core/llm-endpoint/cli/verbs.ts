/**
 * `svc llm-endpoint status | usage | start | stop`: the daemon's llm-endpoint sidecar, through
 * its routes. Loaded when the verb runs.
 */
import { DaemonClient } from "../../cli/daemon-client.js";
import { SvcError } from "../../errors.js";
import { printJson, println } from "../../cli/output.js";
import type { SidecarStatus } from "../supervisor.js";
import type { Totals } from "../service.js";

interface Status {
  enabled: boolean;
  sidecar: SidecarStatus;
  url?: string;
  routes: Array<{ name: string; provider: string; baseUrl: string; models: string[]; key: string | null }>;
  sessions: number;
  notProxied?: Array<{ sessionId: string; adapter: string; why: string }>;
}

async function client(): Promise<DaemonClient> {
  return DaemonClient.connect();
}

/** The daemon answers 404 for the routes while features.llmEndpoint has been off since it started. */
async function call<T>(method: string, path: string): Promise<T> {
  try {
    return await (await client()).request<T>(method, path, method === "POST" ? {} : undefined);
  } catch (err) {
    if (SvcError.is(err) && err.code === "not_found" && /no route|not found/i.test(err.message)) {
      throw new SvcError(
        "not_found",
        "this daemon has no llm-endpoint: features.llmEndpoint has been off since it started (`svc config set features.llmEndpoint true` starts it)",
      );
    }
    throw err;
  }
}

function printStatus(s: Status): void {
  const sc = s.sidecar;
  println(
    `llm-endpoint: ${s.enabled ? sc.state : "stopped"}${s.url ? ` at ${s.url}` : ""}${sc.pid ? ` (pid ${sc.pid})` : ""}`,
  );
  if (sc.restarts)
    println(
      `restarts: ${sc.restarts}${sc.lastExit ? ` (last exit ${sc.lastExit.signal ?? `code ${sc.lastExit.code}`} at ${sc.lastExit.at})` : ""}`,
    );
  if (sc.lastError) println(`last error: ${sc.lastError}`);
  println(`sessions holding a token: ${s.sessions}`);
  for (const n of s.notProxied ?? []) println(`not proxied: session ${n.sessionId} (${n.adapter}): ${n.why}`);
  for (const r of s.routes)
    println(
      `route ${r.name}: ${r.provider} ${r.baseUrl} models ${r.models.join(" ") || "(by role only)"}; key: ${r.key ?? "none (calls to it are refused)"}`,
    );
}

export async function llmStatus(opts: { json?: boolean }): Promise<void> {
  const s = await call<Status>("GET", "/llm-endpoint/status");
  if (opts.json) printJson(s);
  else printStatus(s);
}

export async function llmUsage(opts: { json?: boolean; session?: string; run?: string }): Promise<void> {
  const q = new URLSearchParams();
  if (opts.session) q.set("sessionId", opts.session);
  if (opts.run) q.set("runId", opts.run);
  const u = await call<{
    day: Totals & { date: string; damagedLines: number };
    sessions: Record<string, Totals>;
    runs: Record<string, Totals>;
  }>("GET", `/llm-endpoint/usage${q.size ? `?${q}` : ""}`);
  if (opts.json) return printJson(u);
  const line = (t: Totals) =>
    `${t.calls} calls, ${t.inputTokens} in, ${t.outputTokens} out${t.estimatedTokens ? `, ${t.estimatedTokens} estimated (calls cut before their usage)` : ""}${t.refused ? `, ${t.refused} refused` : ""}`;
  println(
    `today (${u.day.date} UTC): ${line(u.day)}${u.day.damagedLines ? ` (${u.day.damagedLines} damaged log lines not counted)` : ""}`,
  );
  for (const [id, t] of Object.entries(u.sessions)) println(`session ${id}: ${line(t)}`);
  for (const [id, t] of Object.entries(u.runs)) println(`run ${id}: ${line(t)}`);
}

export async function llmControl(verb: "start" | "stop", opts: { json?: boolean }): Promise<void> {
  const s = await call<Status>("POST", `/llm-endpoint/${verb}`);
  if (opts.json) printJson(s);
  else printStatus(s);
}
