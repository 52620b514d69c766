/**
 * `svc status [--json]`: whether a daemon runs for this `$SVC_HOME`, where, and what it warns its
 * owner of (runtime.json's `warnings`, e.g. a daemon open to the network without a token). It
 * reads runtime.json and asks the daemon's open `/health`; exit 0 when running, 3 when not (as
 * `systemctl status` and LSB init scripts say "not running").
 */
import { baseUrlOf, liveRuntimeInfo } from "../daemon/runtime-file.js";
import { svcHome } from "../storage/paths.js";
import { printJson, println, warn } from "./output.js";

export interface StatusView {
  running: boolean;
  home: string;
  pid?: number;
  url?: string;
  bind?: string;
  port?: number;
  version?: string;
  startedAt?: string;
  uptimeMs?: number;
  /** The daemon answers `/health` (it may still be starting, or wedged, when false). */
  answering?: boolean;
  warnings: string[];
}

export async function daemonStatus(home = svcHome()): Promise<StatusView> {
  const info = await liveRuntimeInfo(home);
  if (!info) return { running: false, home, warnings: [] };
  const url = baseUrlOf(info);
  const health = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) })
    .then((r) => (r.ok ? (r.json() as Promise<{ uptimeMs?: number }>) : undefined))
    .catch(() => undefined);
  return {
    running: true,
    home,
    pid: info.pid,
    url,
    bind: info.bind,
    port: info.port,
    version: info.version,
    startedAt: new Date(info.startedAt).toISOString(),
    ...(health?.uptimeMs !== undefined ? { uptimeMs: health.uptimeMs } : {}),
    answering: health !== undefined,
    warnings: info.warnings ?? [],
  };
}

export async function printStatus(o: { json?: boolean }): Promise<void> {
  const s = await daemonStatus();
  if (o.json) printJson(s);
  else if (!s.running) println(`svc daemon: not running (home ${s.home}); start it with \`svc serve\``);
  else {
    const up = s.uptimeMs !== undefined ? `, up ${Math.round(s.uptimeMs / 1000)} s` : "";
    println(
      `svc daemon: running, pid ${s.pid}, ${s.bind}:${s.port} (${s.url}), version ${s.version}${up}${s.answering ? "" : ", not answering /health"}`,
    );
    println(`home: ${s.home}`);
    for (const w of s.warnings) warn(w);
  }
  process.exitCode = s.running ? 0 : 3;
}
