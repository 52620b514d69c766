/**
 * Run records under `$SVC_HOME/runs/<runId>/`: `swarm.json` (the file as given) and `run.json`
 * (the resolved plan with sources, each step's state, session id, timing and output). Every write
 * is atomic and durable (core/storage), and writes of one run are serialized, so a kill -9 leaves
 * the last complete record.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { SvcError } from "../errors.js";
import { readJsonFile } from "../storage/json-file.js";
import { writeFileDurable } from "../storage/atomic-write.js";
import { FILES } from "../storage/paths.js";
import type { RunPlan } from "./plan.js";

export const RUNS_DIR = FILES.runs;

export type StepState = "waiting" | "running" | "succeeded" | "failed" | "skipped" | "cancelled";
export type RunState = "running" | "succeeded" | "failed" | "cancelled" | "interrupted";

export interface StepRecord {
  state: StepState;
  sessionId?: string;
  startedAt?: number;
  endedAt?: number;
  stopReason?: string;
  /** The agent's final output of its turn (what `${{ steps.<id>.output }}` gives). */
  output?: string;
  error?: string;
  /** Why a step was skipped or cancelled. */
  reason?: string;
  /**
   * What became of the planned model at the agent: applied (and how), or not, with the note
   * "model not applied (agent default: X)" (docs/sessions.md).
   */
  model?: { requested?: string; applied: boolean; via?: string; current?: string; note?: string };
}

export interface RunRecord {
  runId: string;
  name: string;
  file?: string;
  state: RunState;
  /** The session the run's steps nest under (the calling session, per spawn.attach), if any. */
  parentSessionId?: string;
  createdAt: number;
  endedAt?: number;
  plan: RunPlan;
  steps: Record<string, StepRecord>;
}

export type RunSummary = Pick<RunRecord, "runId" | "name" | "file" | "state" | "createdAt" | "endedAt"> & {
  counts: Record<StepState, number>;
};

const RUN_ID = /^run_[0-9A-HJKMNP-TV-Z]{26}$/;

export function isRunId(id: string): boolean {
  return RUN_ID.test(id);
}

export class RunStore {
  private readonly queues = new Map<string, Promise<void>>();

  constructor(readonly home: string) {}

  dir(runId: string): string {
    if (!isRunId(runId))
      throw new SvcError("invalid_input", `invalid run id ${JSON.stringify(runId)}: run ids look like run_01J…`);
    return join(this.home, RUNS_DIR, runId);
  }

  /** Writes the swarm file as given (once, at the start). */
  async writeSwarm(runId: string, text: string): Promise<void> {
    await writeFileDurable(join(this.dir(runId), "swarm.json"), text.endsWith("\n") ? text : text + "\n");
  }

  /** Queues a write of the record (a snapshot taken now); resolves when it is on disk. */
  save(record: RunRecord): Promise<void> {
    const text = JSON.stringify(record, null, 2) + "\n";
    const path = join(this.dir(record.runId), "run.json");
    const prev = this.queues.get(record.runId) ?? Promise.resolve();
    const next = prev.then(() => writeFileDurable(path, text));
    const tail = next.catch(() => undefined);
    this.queues.set(record.runId, tail);
    void tail.then(() => {
      if (this.queues.get(record.runId) === tail) this.queues.delete(record.runId);
    });
    return next;
  }

  async get(runId: string): Promise<RunRecord> {
    const rec = await readJsonFile<RunRecord>(join(this.dir(runId), "run.json"));
    if (!rec)
      throw new SvcError(
        "not_found",
        `no run ${runId} under ${join(this.home, RUNS_DIR)}; list them with \`svc run-swarm ls\``,
      );
    return rec;
  }

  /** Every run, newest first. Unreadable records are left out. */
  async list(): Promise<RunRecord[]> {
    const names = await readdir(join(this.home, RUNS_DIR)).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return [] as string[];
      throw err;
    });
    const out: RunRecord[] = [];
    for (const n of names.filter(isRunId).sort().reverse()) {
      const rec = await this.get(n).catch(() => undefined);
      if (rec) out.push(rec);
    }
    return out;
  }
}

export function summarize(rec: RunRecord): RunSummary {
  const counts: Record<StepState, number> = {
    waiting: 0,
    running: 0,
    succeeded: 0,
    failed: 0,
    skipped: 0,
    cancelled: 0,
  };
  for (const s of Object.values(rec.steps)) counts[s.state]++;
  return {
    runId: rec.runId,
    name: rec.name,
    ...(rec.file ? { file: rec.file } : {}),
    state: rec.state,
    createdAt: rec.createdAt,
    ...(rec.endedAt ? { endedAt: rec.endedAt } : {}),
    counts,
  };
}
