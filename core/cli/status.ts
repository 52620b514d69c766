/**
 * `svc status [--json]`: whether a daemon runs for this `$SVC_HOME`, where, and what it holds:
 * sessions by activity, sentinels, pending and dead deliveries, adapters loaded and failed,
 * pairings and the tunnel, and what it warns its owner of. It reads runtime.json and asks the
 * daemon's `GET /status` (one request); exit 0 when running, 3 when not (as `systemctl status`
 * and LSB init scripts say "not running"). It is on the CLI's fast path (core/cli/fast-path.ts):
 * it imports nothing heavy.
 */
import type { DaemonStatus } from "../daemon/status-module.js";
import { baseUrlOf, liveRuntimeInfo } from "../daemon/runtime-info.js";
import { svcHome } from "../storage/paths.js";
import { DaemonClient } from "./daemon-client.js";
import { printJson, println, warn } from "./output.js";

export interface StatusView
  extends Partial<Pick<DaemonStatus, "sessions" | "sentinels" | "deliveries" | "adapters" | "remote" | "store">> {
  running: boolean;
  home: string;
  pid?: number;
  url?: string;
  bind?: string;
  port?: number;
  version?: string;
  startedAt?: string;
  uptimeMs?: number;
  /** The daemon answers `GET /status` (it may still be starting, or wedged, when false). */
  answering?: boolean;
  /** Why it did not answer, when it did not. */
  error?: string;
  warnings: string[];
}

export async function daemonStatus(home = svcHome()): Promise<StatusView> {
  const info = await liveRuntimeInfo(home);
  if (!info) return { running: false, home, warnings: [] };
  const base = {
    running: true,
    home,
    pid: info.pid,
    url: baseUrlOf(info),
    bind: info.bind,
    port: info.port,
    version: info.version,
    startedAt: new Date(info.startedAt).toISOString(),
  };
  try {
    const s = await (await DaemonClient.connect(home)).request<DaemonStatus>("GET", "/status", undefined, {
      timeoutMs: 5_000,
    });
    return {
      ...base,
      uptimeMs: s.uptimeMs,
      answering: true,
      warnings: s.warnings,
      sessions: s.sessions,
      sentinels: s.sentinels,
      deliveries: s.deliveries,
      adapters: s.adapters,
      remote: s.remote,
      store: s.store,
    };
  } catch (err) {
    return { ...base, answering: false, error: (err as Error).message, warnings: info.warnings ?? [] };
  }
}

export async function printStatus(o: { json?: boolean }): Promise<void> {
  const s = await daemonStatus();
  process.exitCode = s.running ? 0 : 3;
  if (o.json) return printJson(s);
  if (!s.running) {
    return println(
      `svc daemon: not running (home ${s.home}); start it with \`svc start\` (in the background) or \`svc serve\``,
    );
  }
  const up = s.uptimeMs !== undefined ? `, up ${formatDuration(s.uptimeMs)}` : "";
  println(
    `svc daemon: running, pid ${s.pid}, ${s.bind}:${s.port} (${s.url}), version ${s.version}${up}${s.answering ? "" : ", not answering"}`,
  );
  for (const [label, value] of statusLines(s)) println(`${label.padEnd(11)} ${value}`);
  for (const w of s.warnings) warn(w);
}

/** The labelled lines under the first: home, then what the daemon said of itself. */
function statusLines(s: StatusView): Array<[string, string]> {
  const lines: Array<[string, string]> = [["home", s.home]];
  if (!s.answering) return [...lines, ["error", s.error ?? "no answer"]];
  const { sessions: ss, sentinels: st, deliveries: d, adapters: a, remote: r } = s as Required<StatusView>;
  const kinds = Object.entries(st.byTarget).map(([k, n]) => `${k} ${n}`);
  lines.push(
    ["sessions", `${ss.total}: ${ss.running} running, ${ss.attention} attention, ${ss.quiet} quiet, ${ss.ended} ended`],
    [
      "sentinels",
      `${st.total}: ${st.active} active, ${st.expired} expired${kinds.length ? ` (${kinds.join(", ")})` : ""}`,
    ],
    ["deliveries", `${d.pending} pending, ${d.dead} dead`],
    ["adapters", adaptersLine(a)],
  );
  for (const f of a.failed) lines.push(["", `${f.package} failed to load (${f.phase}): ${f.message}`]);
  lines.push(["pairings", String(r.pairings.length)]);
  for (const p of r.pairings) lines.push(["", `${p.id}  ${p.label} (${p.role}, ${p.scope}): link ${p.link.state}`]);
  lines.push(["tunnel", r.tunnel.state + (r.tunnel.publicUrl ? ` ${r.tunnel.publicUrl}` : "")]);
  // Shown in team mode only: the files under the home are the default.
  if (s.store?.kind === "postgres") lines.push(["store", `team PostgreSQL at ${s.store.where}`]);
  return lines;
}

/** `10 loaded (9 built-in, 1 installed: svc-adapter-parrot@1.2.0), 1 failed`. */
function adaptersLine(a: DaemonStatus["adapters"]): string {
  const installed = a.loaded.map((p) => p.package + (p.version ? `@${p.version}` : "")).join(", ");
  const parts = `${a.builtin} built-in, ${a.loaded.length} installed${installed ? `: ${installed}` : ""}`;
  return `${a.builtin + a.loaded.length} loaded (${parts}), ${a.failed.length} failed`;
}

/** 42 s, 5 min, 3 h 12 min, 2 d 4 h. */
export function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}
