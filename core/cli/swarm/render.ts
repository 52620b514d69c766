/** How the CLI shows a swarm plan, a run's progress and its result table. */
import type { PlannedStep, RunPlan } from "../../swarm/plan.js";
import type { RunRecord, RunSummary, StepRecord } from "../../swarm/records.js";
import { dim, printTable, println, red } from "../output.js";

export function modelCell(s: PlannedStep): string {
  const m = s.model;
  if (!("id" in m)) return `${m.ref} (unresolved)`;
  if (!m.chain) return `${m.id} (step)`;
  return `${m.id} (${m.chain.map((h) => `role:${h.role}@${h.source}`).join(" -> ")})`;
}

const CHOSEN = { step: "step", acpAgents: "acpAgents models", catalog: "model catalog" } as const;
const FROM = { package: "package", config: "acpAgents", catalog: "ACP catalog" } as const;

function adapterCells(s: PlannedStep): [string, string] {
  const a = s.adapter;
  if (!a.slug) return ["-", "-"];
  const from = a.source ? (a.source === "package" ? `package ${a.package}` : FROM[a.source]) : "unavailable";
  return [`${a.slug} (${from})`, a.chosenBy ? CHOSEN[a.chosenBy] : "-"];
}

export function printPlan(plan: RunPlan): void {
  println(
    `swarm ${plan.name}: ${plan.steps.length} steps, concurrency ${plan.concurrency}${plan.file ? `, file ${plan.file}` : ""}`,
  );
  if (plan.models.repository) println(`repository models: ${plan.models.repository.path}`);
  const runRoles = Object.keys(plan.models.run);
  if (runRoles.length) println(`run models: ${runRoles.map((r) => `${r}=${plan.models.run[r]}`).join(", ")}`);
  const byId = new Map(plan.steps.map((s) => [s.id, s]));
  printTable(
    ["#", "STEP", "NEEDS", "MODEL (SOURCE)", "ADAPTER (FROM)", "CHOSEN BY", "WHERE"],
    plan.order.map((id, i) => {
      const s = byId.get(id)!;
      return [
        i + 1,
        s.id,
        s.needs.join(",") || "-",
        modelCell(s),
        ...adapterCells(s),
        s.worktree !== undefined ? `worktree ${s.worktree === true ? "(new)" : s.worktree}` : s.cwd,
      ];
    }),
  );
  for (const s of plan.steps) if (s.problem) println(red(`${s.id}: cannot start: ${s.problem}`));
  for (const f of plan.loadReport) println(dim(`load report: ${f.package} (${f.phase}): ${f.error}`));
}

const duration = (r: StepRecord) =>
  r.startedAt !== undefined && r.endedAt !== undefined ? `${((r.endedAt - r.startedAt) / 1000).toFixed(1)}s` : "";
const firstLine = (t: string | undefined, max = 60) => {
  const line = (t ?? "").trim().split("\n")[0] ?? "";
  return line.length > max ? line.slice(0, max - 1) + "…" : line;
};

export function printResults(run: RunRecord): void {
  printTable(
    ["STEP", "STATE", "SESSION", "TIME", "OUTPUT / REASON"],
    run.plan.order.map((id) => {
      const r = run.steps[id]!;
      return [
        id,
        r.state,
        r.sessionId ?? "",
        duration(r),
        r.state === "succeeded" ? firstLine(r.output) : firstLine(r.error ?? r.reason, 120),
      ];
    }),
  );
  for (const id of run.plan.order) {
    const m = run.steps[id]?.model;
    if (m && !m.applied && m.note) println(red(`${id}: ${m.note}`));
  }
  println(`run ${run.runId} ${run.state}`);
}

export function progressLine(run: RunRecord): string {
  const c = { waiting: 0, running: 0, done: 0 };
  for (const s of Object.values(run.steps)) {
    if (s.state === "waiting") c.waiting++;
    else if (s.state === "running") c.running++;
    else c.done++;
  }
  return `waiting ${c.waiting} · running ${c.running} · done ${c.done}`;
}

export function printRuns(runs: RunSummary[]): void {
  if (runs.length === 0) return println("no runs");
  printTable(
    ["RUN", "NAME", "STATE", "SUCCEEDED", "FAILED", "SKIPPED", "CREATED"],
    runs.map((r) => [
      r.runId,
      r.name,
      r.state,
      r.counts.succeeded,
      r.counts.failed,
      r.counts.skipped + r.counts.cancelled,
      new Date(r.createdAt).toISOString(),
    ]),
  );
}
