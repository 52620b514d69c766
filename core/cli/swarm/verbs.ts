/**
 * `svc run-swarm`: reads the swarm file, has the daemon run it (or, for --dry-run without a
 * daemon, resolves the plan here with the same code), shows progress while it runs (reading the
 * run's record at each of its /events events) and ends with the result table; exit 0 only when
 * every step succeeded. Ctrl-C cancels the run.
 */
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { readEffectiveConfig } from "../../config/read-effective.js";
import { SvcError } from "../../errors.js";
import { svcHome } from "../../storage/paths.js";
import type { RunPlan } from "../../swarm/plan.js";
import { preparePlan } from "../../swarm/prepare.js";
import type { RunInput } from "../../swarm/run-input.js";
import { RunStore, summarize, type RunRecord, type RunSummary } from "../../swarm/records.js";
import { parseSwarmText } from "../../swarm/schema.js";
import { parseRunModels } from "../../swarm/step-model.js";
import { DaemonClient } from "../daemon-client.js";
import { printJson, println } from "../output.js";
import { printPlan, printResults, printRuns, progressLine } from "./render.js";
import { RunWatch } from "./run-watch.js";

export async function runSwarm(
  file: string,
  f: { model?: string[]; concurrency?: string; root?: string; dryRun?: boolean; attach?: boolean; json?: boolean },
): Promise<void> {
  const path = resolve(file);
  const text = await readFile(path, "utf8").catch((err: NodeJS.ErrnoException) => {
    throw new SvcError(
      "invalid_input",
      `cannot read swarm file ${path}: ${err.code === "ENOENT" ? "no such file" : err.message}`,
    );
  });
  const swarm = parseSwarmText(text, path);
  const concurrency = f.concurrency === undefined ? undefined : Number(f.concurrency);
  if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64)) {
    throw new SvcError("usage", `--concurrency must be an integer from 1 to 64, got ${JSON.stringify(f.concurrency)}`);
  }
  const input: RunInput = {
    swarm,
    text,
    file: path,
    baseDir: dirname(path),
    models: parseRunModels(f.model ?? []),
    ...(concurrency ? { concurrency } : {}),
    ...(f.root ? { worktreeRoot: resolve(f.root) } : {}),
    ...(f.dryRun ? { dryRun: true } : {}),
    ...(f.attach !== undefined ? { attach: f.attach } : {}),
  };
  if (f.dryRun) {
    const { plan, parentSessionId } = await dryRun(input);
    if (f.json) printJson({ plan, ...(parentSessionId ? { parentSessionId } : {}) });
    else {
      printPlan(plan);
      if (parentSessionId) println(`the steps would nest under session ${parentSessionId}`);
    }
    if (plan.steps.some((s) => s.problem)) process.exitCode = 1;
    return;
  }
  const client = await DaemonClient.connect();
  const started = await client.request<{ plan: RunPlan; run: RunRecord }>("POST", "/swarm/runs", input);
  const runId = started.run.runId;
  if (!f.json) {
    printPlan(started.plan);
    println(
      `run ${runId} started${started.run.parentSessionId ? `, its steps nested under session ${started.run.parentSessionId}` : ""}`,
    );
  }
  let cancelling = false;
  const onSigint = () => {
    if (cancelling) return;
    cancelling = true;
    if (!f.json) println(`cancelling run ${runId}…`);
    void client
      .request("POST", `/swarm/runs/${runId}/cancel`, undefined, { timeoutMs: 120_000 })
      .catch(() => undefined);
  };
  process.on("SIGINT", onSigint);
  let run = started.run;
  const seen = new Map<string, string>();
  // Connected before the first read: whatever changes after it is an event.
  const watch = await RunWatch.open(client, runId);
  try {
    for (;;) {
      run = (await client.request<{ run: RunRecord }>("GET", `/swarm/runs/${runId}`)).run;
      if (!f.json) reportChanges(run, seen);
      if (run.state !== "running") break;
      await watch.next();
    }
  } finally {
    watch.close();
    process.off("SIGINT", onSigint);
  }
  if (f.json) printJson({ run });
  else printResults(run);
  process.exitCode = run.state === "succeeded" ? 0 : cancelling ? 130 : 1;
}

/** One line per step state change, with the counts. */
function reportChanges(run: RunRecord, seen: Map<string, string>): void {
  for (const id of run.plan.order) {
    const s = run.steps[id]!;
    const key = `${s.state}:${s.sessionId ?? ""}`;
    const before = seen.get(id);
    if (before === key) continue;
    seen.set(id, key);
    if (s.state === "waiting") continue;
    // A step that started and ended between two polls still shows that it ran, and in which session.
    if (s.state !== "running" && s.sessionId && !before?.startsWith("running:ses_"))
      println(`${id}: running (${s.sessionId})  [${progressLine(run)}]`);
    const detail =
      s.state === "running"
        ? s.sessionId
          ? ` (${s.sessionId})`
          : ""
        : s.state === "succeeded"
          ? ""
          : `: ${s.error ?? s.reason ?? ""}`;
    println(`${id}: ${s.state}${detail}  [${progressLine(run)}]`);
  }
}

/** The daemon's plan when one is running (its adapter walk is the run's); else the same resolution here. */
async function dryRun(input: RunInput): Promise<{ plan: RunPlan; parentSessionId?: string }> {
  const client = await DaemonClient.connect().catch(() => undefined);
  if (client) return client.request<{ plan: RunPlan; parentSessionId?: string }>("POST", "/swarm/runs", input);
  const snapshot = await readEffectiveConfig();
  return {
    plan: (await preparePlan(input, { config: snapshot.effective, env: process.env, cwd: process.cwd() })).plan,
  };
}

export async function runSwarmLs(json: boolean): Promise<void> {
  const runs = await fromDaemonOrDisk(
    async (c) => (await c.request<{ runs: RunSummary[] }>("GET", "/swarm/runs")).runs,
    async (store) => (await store.list()).map((r) => summarize(offline(r))),
  );
  if (json) return printJson({ runs });
  printRuns(runs);
}

export async function runSwarmShow(runId: string, json: boolean): Promise<void> {
  const run = await fromDaemonOrDisk(
    async (c) => (await c.request<{ run: RunRecord }>("GET", `/swarm/runs/${encodeURIComponent(runId)}`)).run,
    async (store) => offline(await store.get(runId)),
  );
  if (json) return printJson({ run });
  printPlan(run.plan);
  printResults(run);
  for (const id of run.plan.order) {
    const s = run.steps[id]!;
    if (s.output) println(`\n--- ${id} output ---\n${s.output}`);
  }
}

/** Without a daemon, a run still recorded as running was cut short by its daemon's end. */
function offline(r: RunRecord): RunRecord {
  return r.state === "running" ? { ...r, state: "interrupted" } : r;
}

async function fromDaemonOrDisk<T>(
  viaDaemon: (c: DaemonClient) => Promise<T>,
  viaDisk: (s: RunStore) => Promise<T>,
): Promise<T> {
  const client = await DaemonClient.connect().catch(() => undefined);
  return client ? viaDaemon(client) : viaDisk(new RunStore(svcHome()));
}
