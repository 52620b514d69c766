import { stat } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { resolvePresetCwd } from "../../config/local-paths.js";
import { readEffectiveConfig } from "../../config/read-effective.js";
import { SvcError } from "../../errors.js";
import type { PromptReceipt } from "../../plugin-api/sessions.js";
import type { SessionDescriptor, SessionVerdict, TurnResult } from "../../sessions/types.js";
import { readVerdict } from "../../sessions/verdict-file.js";
import { isSessionId, sessionFiles } from "../../sessions/events-dir.js";
import { readTranscript } from "../../sessions/transcript-reader.js";
import { DaemonClient } from "../daemon-client.js";
import { parseDurationFlag } from "../duration.js";
import { RUN_TIMEOUT_FLAG } from "../duration-flags.js";
import { dim, printJson, printTable, println, warn } from "../output.js";

export interface StartFlags {
  adapter: string;
  cwd?: string;
  prompt?: string;
  label?: string;
  option?: string[];
  skill?: string[];
  worktree?: string | true;
  root?: string;
  attach?: boolean;
  dedupe?: boolean;
  idempotencyKey?: string;
  trace?: boolean;
  json?: boolean;
}

/** `--option k=v`: true/false become booleans, numbers numbers, the rest strings. */
export function parseOptions(pairs: string[] = []): Record<string, boolean | number | string> {
  const out: Record<string, boolean | number | string> = {};
  for (const pair of pairs) {
    const i = pair.indexOf("=");
    if (i <= 0) throw new SvcError("usage", `--option expects key=value, got ${JSON.stringify(pair)}`);
    const raw = pair.slice(i + 1);
    out[pair.slice(0, i)] =
      raw === "true" ? true : raw === "false" ? false : raw !== "" && Number.isFinite(Number(raw)) ? Number(raw) : raw;
  }
  return out;
}

function startBody(f: StartFlags, wait: boolean) {
  return {
    adapter: f.adapter,
    cwd: resolve(process.cwd(), f.cwd ?? "."),
    ...(f.prompt ? { prompt: f.prompt } : {}),
    ...(f.label ? { label: f.label } : {}),
    ...(f.option?.length ? { options: parseOptions(f.option) } : {}),
    ...(f.skill?.length ? { skills: f.skill } : {}),
    ...(f.worktree !== undefined ? { worktree: f.worktree } : {}),
    ...(f.root ? { worktreeRoot: resolve(process.cwd(), f.root) } : {}),
    ...(f.attach !== undefined ? { attach: f.attach } : {}),
    ...(f.dedupe === false ? { dedupe: false } : {}),
    ...(f.idempotencyKey ? { idempotencyKey: f.idempotencyKey } : {}),
    ...(f.trace !== undefined ? { extTracing: f.trace } : {}),
    ...(wait ? { wait: true } : {}),
  };
}

export async function sessionsStart(f: StartFlags): Promise<void> {
  const client = await DaemonClient.connect();
  const res = await client.request<{ descriptor: SessionDescriptor; receipt?: PromptReceipt; deduped?: boolean }>(
    "POST",
    "/sessions",
    startBody(f, false),
  );
  if (f.json) return printJson(res);
  const d = res.descriptor;
  println(
    res.deduped
      ? `already running: ${d.id} (same idempotency key; no new session started)`
      : `started ${d.id} (${d.adapter}, ${d.source})`,
  );
  const note = (d.info?.model as { note?: string } | undefined)?.note;
  if (note) warn(note);
  if (d.worktree)
    println(`worktree: ${d.worktree.path} (branch ${d.worktree.branch}, from ${d.worktree.baseCommit.slice(0, 12)})`);
  if (d.provisioning?.state === "queued") println(`provisioning: queued, position ${d.provisioning.position}`);
  else if (d.provisioning)
    println(`provisioning: ${d.provisioning.state}${d.provisioning.phase ? ` (${d.provisioning.phase})` : ""}`);
  println(dim(`transcript: ${d.eventsPath}`));
}

/** `svc sessions run`: start, prompt, wait for the turn to end, print the result, stop the session. */
export async function sessionsRun(f: StartFlags & { keep?: boolean; timeout?: string }): Promise<void> {
  if (!f.prompt) throw new SvcError("usage", "svc sessions run needs --prompt <text>");
  const timeoutMs = parseDurationFlag(f.timeout ?? "600", RUN_TIMEOUT_FLAG);
  const client = await DaemonClient.connect();
  const res = await client.request<{ descriptor: SessionDescriptor; result?: TurnResult }>(
    "POST",
    "/sessions",
    startBody(f, true),
    { timeoutMs },
  );
  if (!f.keep) await client.request("POST", `/sessions/${encodeURIComponent(res.descriptor.id)}/stop`);
  if (f.json) return printJson(res);
  if (res.result?.text) process.stdout.write(res.result.text.endsWith("\n") ? res.result.text : res.result.text + "\n");
  if (res.result?.error) throw new SvcError("unavailable", `session ${res.descriptor.id}: ${res.result.error}`);
}

export async function sessionsList(json: boolean): Promise<void> {
  const client = await DaemonClient.connect();
  const { sessions } = await client.request<{ sessions: SessionDescriptor[] }>("GET", "/sessions");
  if (json) return printJson({ sessions });
  if (sessions.length === 0) return println("no sessions");
  printTable(
    ["ID", "PARENT", "ADAPTER", "MODEL", "STATE", "ACTIVITY", "TURNS", "PENDING", "VERDICT", "WORKTREE", "LABEL"],
    sessions.map((s) => [
      s.id,
      s.parentId ?? "-",
      s.adapter,
      modelOf(s),
      stateOf(s),
      s.activity,
      s.turns,
      pending(s),
      s.verdict?.verdict ?? "-",
      s.worktree?.slug ?? "-",
      s.label ?? "",
    ]),
  );
}

/** The model the agent runs: the requested one once applied, else what the agent said it runs. */
function modelOf(s: SessionDescriptor): string {
  const m = s.info?.model as { requested?: string; applied?: boolean; current?: string } | undefined;
  const asked = typeof s.options.model === "string" ? s.options.model : undefined;
  if (!m || typeof m !== "object") return asked ?? "-";
  if (m.applied) return m.current ?? m.requested ?? "-";
  return m.requested ? `${m.current ?? "agent default"} (${m.requested} not applied)` : (m.current ?? "-");
}

function stateOf(s: SessionDescriptor): string {
  if (s.stalledSinceMs !== undefined) return `${s.state} (stalled)`;
  const p = s.provisioning;
  if (p?.state === "queued") return `${s.state} (queued #${p.position})`;
  if (p?.state === "running") return `${s.state} (provisioning: ${p.phase ?? "…"})`;
  if (p?.state === "failed") return `${s.state} (provisioning failed: ${p.phase})`;
  return s.state;
}

function pending(s: SessionDescriptor): string {
  const stale = s.pendingPrompts.filter((p) => p.stale).length;
  return `${s.pendingPrompts.length}${stale ? ` (${stale} stale)` : ""}`;
}

function printVerdict(v: SessionVerdict | undefined): void {
  if (!v) return println("verdict: - (the steward has not judged this session)");
  println(`verdict: ${v.verdict} (${v.trigger}, ${new Date(v.at).toISOString()}, ${v.model})`);
  println(`  reason: ${v.reason}`);
  if (v.suggestedPrompt) println(`  suggested prompt: ${v.suggestedPrompt}`);
}

/** `svc sessions show`: from the daemon; a session it does not know (an earlier life) from the files on disk. */
export async function sessionsShow(id: string, json: boolean): Promise<void> {
  const client = await DaemonClient.connect().catch((err: SvcError) => {
    if (err.code !== "daemon_not_running") throw err;
    return undefined;
  });
  const found = client
    ? await client
        .request<{ descriptor: SessionDescriptor }>("GET", `/sessions/${encodeURIComponent(id)}`)
        .catch((err: SvcError) => {
          if (err.code !== "not_found") throw err;
          return undefined;
        })
    : undefined;
  if (found) {
    if (json) return printJson(found);
    const s = found.descriptor;
    println(
      `${s.id}  ${s.adapter}  ${stateOf(s)}  ${s.activity}  turns ${s.turns}${s.parentId ? `  parent ${s.parentId}` : ""}${s.label ? `  ${s.label}` : ""}`,
    );
    println(dim(`transcript: ${s.eventsPath}`));
    return printVerdict(s.verdict);
  }
  if (!isSessionId(id)) throw new SvcError("usage", `invalid session id ${JSON.stringify(id)}`);
  const { effective } = await readEffectiveConfig();
  const files = sessionFiles(effective.sessions.eventsDir, id);
  if (!(await stat(files.events).catch(() => undefined)))
    throw new SvcError(
      "not_found",
      `no session ${id}: the daemon does not know it and there is no transcript at ${files.events}`,
    );
  const verdict = await readVerdict(effective.sessions.eventsDir, id, (path, reason) =>
    warn(`${path} is damaged (${reason}); it was left as it is`),
  );
  if (json) return printJson({ id, eventsPath: files.events, ...(verdict ? { verdict } : {}) });
  println(`${id}  (not in the daemon: an ended session, from the files on disk)`);
  println(dim(`transcript: ${files.events}`));
  printVerdict(verdict);
}

/** `svc sessions judge`: waits for the judge (at most extJudge.timeoutSec, and a margin). */
export async function sessionsJudge(id: string, json: boolean): Promise<void> {
  const client = await DaemonClient.connect();
  const res = await client.request<{ verdict: SessionVerdict; descriptor: SessionDescriptor }>(
    "POST",
    `/sessions/${encodeURIComponent(id)}/judge`,
    {},
    { timeoutMs: 660_000 },
  );
  if (json) return printJson(res);
  printVerdict(res.verdict);
  if (res.verdict.verdict === "judge_error") process.exitCode = 1;
}

export async function sessionsPrompt(
  id: string,
  text: string,
  opts: { interrupt?: boolean; wait?: boolean; json?: boolean },
): Promise<void> {
  const client = await DaemonClient.connect();
  const res = await client.request<{ receipt: PromptReceipt; result?: TurnResult }>(
    "POST",
    `/sessions/${encodeURIComponent(id)}/prompt`,
    {
      text,
      ...(opts.interrupt !== undefined ? { interrupt: opts.interrupt } : {}),
      ...(opts.wait ? { wait: true } : {}),
    },
    { timeoutMs: opts.wait ? 3_600_000 : 60_000 },
  );
  if (opts.json) return printJson(res);
  println(`${res.receipt.delivery} ${res.receipt.promptId}${res.receipt.note ? ` (${res.receipt.note})` : ""}`);
  if (res.result?.text) println(res.result.text);
}

export async function sessionsStop(id: string): Promise<void> {
  const client = await DaemonClient.connect();
  const { descriptor } = await client.request<{ descriptor: SessionDescriptor }>(
    "POST",
    `/sessions/${encodeURIComponent(id)}/stop`,
  );
  println(`stopped ${descriptor.id}`);
}

/** `svc sessions resume <id>`: the ended session runs again under its id (docs/sessions.md "Resume"). */
export async function sessionsResume(id: string, opts: { json?: boolean }): Promise<void> {
  const client = await DaemonClient.connect();
  const res = await client.request<{ descriptor: SessionDescriptor }>(
    "POST",
    `/sessions/${encodeURIComponent(id)}/resume`,
    {},
    { timeoutMs: 120_000 },
  );
  if (opts.json) return printJson(res);
  const d = res.descriptor;
  println(
    `resumed ${d.id} (${d.adapter}, ${d.state}, ${d.turns} turn${d.turns === 1 ? "" : "s"} before)${d.parentId ? `, child of ${d.parentId}` : ""}`,
  );
  println(dim(`transcript: ${d.eventsPath}`));
}

/** Through the daemon when it runs; otherwise straight from the transcript files on disk. */
export async function sessionsExport(id: string): Promise<void> {
  const client = await DaemonClient.connect().catch((err: SvcError) => {
    if (err.code !== "daemon_not_running") throw err;
    return undefined;
  });
  if (client) return printJson(await client.request("GET", `/sessions/${encodeURIComponent(id)}/export`));
  if (!isSessionId(id)) throw new SvcError("usage", `invalid session id ${JSON.stringify(id)}`);
  const { effective } = await readEffectiveConfig();
  const files = sessionFiles(effective.sessions.eventsDir, id);
  const events = await readTranscript(files.events);
  if (events.length === 0) throw new SvcError("not_found", `no transcript for session ${id} at ${files.events}`);
  const terminal = await readTranscript(files.terminal);
  printJson({ id, eventsPath: files.events, events, ...(terminal.length ? { terminal } : {}) });
}

/**
 * `svc sessions terminal`: the preset comes from the local config; a relative cwd (flag or
 * preset) resolves against this CLI's cwd before it is sent.
 */
export async function sessionsTerminal(
  argv: string[],
  opts: { preset?: string; cwd?: string; label?: string; name?: string; root?: string; json?: boolean },
): Promise<void> {
  let cwd = opts.cwd;
  if (cwd === undefined && opts.preset) {
    const { effective } = await readEffectiveConfig();
    const preset = effective.terminalPresets[opts.preset];
    if (!preset)
      throw new SvcError(
        "not_found",
        `no terminal preset "${opts.preset}" in terminalPresets; presets: ${Object.keys(effective.terminalPresets).join(", ") || "(none)"}`,
      );
    cwd = resolvePresetCwd(preset, process.cwd()) ?? (preset.workspace ? undefined : ".");
  }
  cwd ??= opts.preset ? undefined : ".";
  const body = {
    ...(opts.preset ? { preset: opts.preset } : {}),
    ...(argv.length ? { argv } : {}),
    ...(cwd !== undefined ? { cwd: isAbsolute(cwd) ? cwd : resolve(process.cwd(), cwd) } : {}),
    ...(opts.label ? { label: opts.label } : {}),
    ...(opts.name ? { name: opts.name } : {}),
    ...(opts.root ? { worktreeRoot: resolve(process.cwd(), opts.root) } : {}),
  };
  if (!body.preset && !body.argv)
    throw new SvcError("usage", "svc sessions terminal needs --preset <name> or a command after `--`");
  const client = await DaemonClient.connect();
  const res = await client.request<{ descriptor: SessionDescriptor }>("POST", "/sessions/terminal", body);
  if (opts.json) return printJson(res);
  println(`started ${res.descriptor.id} (terminal)`);
  println(dim(`output: ${res.descriptor.terminalPath}`));
}
