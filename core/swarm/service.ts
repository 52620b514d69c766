/**
 * Runs in the daemon: each run walks config.adapters afresh, resolves its plan, records itself
 * under `$SVC_HOME/runs/<runId>/`, and starts its steps as sessions through the session runtime's
 * spawn path, in dependency order. Cancel stops the run's sessions; so does the daemon's stop.
 */
import type { DependencyContainer } from "tsyringe";
import type { ConfigService } from "../config/config-service.js";
import type { DaemonEventBus } from "../daemon/event-bus.js";
import { SvcError } from "../errors.js";
import type { Clock, Random, Sleep } from "../runtime/clock.js";
import type { Logger } from "../runtime/logger.js";
import type { SessionRuntime } from "../sessions/runtime.js";
import type { AdapterWalk } from "./adapter-walk.js";
import { runAdapterLookup } from "./run-lookup.js";
import { runParent } from "./run-parent.js";
import type { RunPlan } from "./plan.js";
import { preparePlan } from "./prepare.js";
import type { RunInput } from "./run-input.js";
import { confineToRoots } from "../daemon/confine-paths.js";
import { RunStore, summarize, type RunRecord, type RunSummary, type StepRecord } from "./records.js";
import { runSchedule, type StepRunner } from "./scheduler.js";
import { toStartRequest } from "./spawn-request.js";
import type { Grantor } from "../workspaces/lineage.js";

export interface SwarmDeps {
  container: DependencyContainer;
  sessions: SessionRuntime;
  config: ConfigService;
  clock: Clock;
  random: Random;
  sleep: Sleep;
  logger: Logger;
  events: DaemonEventBus;
  home: string;
  env: NodeJS.ProcessEnv;
}

interface ActiveRun {
  record: RunRecord;
  abort: AbortController;
  done: Promise<void>;
}

export class SwarmService {
  readonly store: RunStore;
  private readonly active = new Map<string, ActiveRun>();

  constructor(private readonly deps: SwarmDeps) {
    this.store = new RunStore(deps.home);
  }

  /**
   * Resolves the plan (adapters walked afresh) and, unless a dry run, starts the run. A run asked
   * for by a session (`callerToken`) nests its steps under it (spawn.attach) and is bounded by that
   * session's delegation: refused when it is 0, and every step's session is granted at most one less
   * (and `defaults.maxGrantableDelegation`).
   */
  async start(
    input: RunInput,
    from: { callerToken?: string; principal?: string } = {},
  ): Promise<{ plan: RunPlan; run?: RunRecord; parentSessionId?: string }> {
    // Afresh: config.json as it is now (a bad file keeps the last good one), not as the watcher last saw it.
    await this.deps.config.reload();
    const cfg = this.deps.config.current().effective;
    const callerId = this.deps.sessions.workspaces.tokens.sessionOf(from.callerToken);
    const caller = this.deps.sessions.grantorOf(callerId);
    const parentSessionId = runParent(this.deps.sessions, cfg, input, callerId);
    const parent = parentSessionId ? { parentSessionId } : {};
    // A caller who is not the owner (a paired device) runs only under pairing.allowedRoots: checked
    // before the repository's models file under baseDir is read, and again for each step's cwd.
    const confine = (paths: Record<string, string | undefined>, required: string[] = []) =>
      confineToRoots(from.principal ?? "loopback", cfg.pairing.allowedRoots ?? [], paths, required);
    await confine({ baseDir: input.baseDir, worktreeRoot: input.worktreeRoot }, ["baseDir"]);
    const { plan, walk } = await preparePlan(input, {
      config: cfg,
      env: this.deps.env,
      cwd: process.cwd(),
      logger: this.deps.logger.child({ module: "swarm" }),
    });
    for (const step of plan.steps) await confine({ [`steps.${step.id}.cwd`]: step.cwd });
    if (input.dryRun) return { plan, ...parent };
    const runId = `run_${this.deps.random.ulid()}`;
    const record: RunRecord = {
      runId,
      name: plan.name,
      ...(plan.file ? { file: plan.file } : {}),
      state: "running",
      ...parent,
      createdAt: this.deps.clock.now(),
      plan,
      steps: Object.fromEntries(plan.steps.map((s) => [s.id, { state: "waiting" as const }])),
    };
    await this.store.writeSwarm(runId, input.text ?? JSON.stringify(input.swarm, null, 2));
    await this.store.save(record);
    const abort = new AbortController();
    const active: ActiveRun = { record, abort, done: Promise.resolve() };
    this.active.set(runId, active);
    active.done = this.execute(active, walk, { caller, worktreeRoot: input.worktreeRoot }).finally(() =>
      this.active.delete(runId),
    );
    this.deps.events.emit("swarm:run-started", { runId, name: plan.name, steps: plan.steps.length });
    return { plan, run: structuredClone(record), ...parent };
  }

  private async execute(
    run: ActiveRun,
    walk: AdapterWalk,
    from: { caller: Grantor | undefined; worktreeRoot: string | undefined },
  ): Promise<void> {
    const { caller } = from;
    const { record } = run;
    const lookup = runAdapterLookup(this.deps.container, walk);
    const runner: StepRunner = async (step, prompt, { signal, onSession }) => {
      const { descriptor, result, deduped } = await this.deps.sessions.start(
        toStartRequest(step, prompt, record.runId, {
          parentSessionId: record.parentSessionId,
          worktreeRoot: from.worktreeRoot,
        }),
        { adapters: lookup, ...(caller ? { caller } : {}) },
      );
      onSession(descriptor.id);
      if (deduped || !result)
        throw new SvcError(
          "conflict",
          `step ${step.id}: session ${descriptor.id} already holds this run's step (deduped); its prompt was not sent again`,
        );
      const stop = () => void this.deps.sessions.stop(descriptor.id).catch(() => undefined);
      signal.addEventListener("abort", stop, { once: true });
      try {
        if (signal.aborted) stop();
        const turn = await this.turnWithin(descriptor.id, result!.promptId, step.timeoutMs);
        const model = modelOutcome(this.deps.sessions, descriptor.id);
        return {
          sessionId: descriptor.id,
          stopReason: turn.stopReason,
          output: turn.text,
          ...(turn.error ? { error: turn.error } : {}),
          ...(model ? { model } : {}),
        };
      } finally {
        signal.removeEventListener("abort", stop);
        // A step's session ends with its turn; its transcript stays under sessions/.
        await this.deps.sessions.stop(descriptor.id).catch(() => undefined);
      }
    };
    try {
      await runSchedule(record.plan, runner, {
        concurrency: record.plan.concurrency,
        signal: run.abort.signal,
        now: () => this.deps.clock.now(),
        onChange: (id, rec) => {
          record.steps[id] = rec;
          void this.store
            .save(record)
            .catch((err: Error) =>
              this.deps.logger.error("could not write a run record", { runId: record.runId, error: err.message }),
            );
          this.deps.events.emit("swarm:step", {
            runId: record.runId,
            step: id,
            state: rec.state,
            ...(rec.sessionId ? { sessionId: rec.sessionId } : {}),
          });
        },
      });
    } catch (err) {
      this.deps.logger.error("swarm run failed", { runId: record.runId, error: (err as Error).message });
    }
    const states = Object.values(record.steps).map((s) => s.state);
    // The live record (what `get` answers while the run is active) turns final only after the
    // write of run.json: a reader that sees "succeeded" finds the same on disk (unless that write
    // failed, which is logged; run.json still says running, so the run then reads as interrupted).
    const ended: RunRecord = {
      ...record,
      state: run.abort.signal.aborted ? "cancelled" : states.every((s) => s === "succeeded") ? "succeeded" : "failed",
      endedAt: this.deps.clock.now(),
    };
    await this.store
      .save(ended)
      .catch((err: Error) =>
        this.deps.logger.error("could not write a run record", { runId: record.runId, error: err.message }),
      );
    Object.assign(record, ended);
    this.deps.events.emit("swarm:run-ended", { runId: record.runId, state: record.state });
    this.deps.logger.info("swarm run ended", { runId: record.runId, state: record.state });
  }

  /** The step's turn, or, after `timeoutMs`, its session stopped and a turn that says so. */
  private async turnWithin(sessionId: string, promptId: string, timeoutMs: number | undefined) {
    const turn = this.deps.sessions.waitFor(sessionId, promptId);
    if (timeoutMs === undefined) return turn;
    const timer = new AbortController();
    const timedOut = this.deps.sleep(timeoutMs, timer.signal).then(
      () => true,
      () => false,
    );
    try {
      const first = await Promise.race([turn, timedOut]);
      if (first !== true) return first as Awaited<typeof turn>;
      await this.deps.sessions.stop(sessionId).catch(() => undefined);
      const ended = await turn;
      return {
        ...ended,
        stopReason: "timeout",
        error: `the turn did not end within timeoutMinutes (${timeoutMs / 60_000}); the session was stopped`,
      };
    } finally {
      timer.abort();
    }
  }

  /** A run as recorded; a run left `running` by an earlier daemon life shows as `interrupted`. */
  async get(runId: string): Promise<RunRecord> {
    const live = this.active.get(runId);
    if (live) return structuredClone(live.record);
    const rec = await this.store.get(runId);
    return rec.state === "running" ? { ...rec, state: "interrupted" } : rec;
  }

  async list(): Promise<RunSummary[]> {
    const recs = await this.store.list();
    return recs.map((r) =>
      summarize(this.active.get(r.runId)?.record ?? (r.state === "running" ? { ...r, state: "interrupted" } : r)),
    );
  }

  /** Stops the run's sessions and cancels the steps not started; resolves with the final record. */
  async cancel(runId: string): Promise<RunRecord> {
    const live = this.active.get(runId);
    if (!live) {
      const rec = await this.get(runId);
      throw new SvcError("conflict", `run ${runId} is not running (it is ${rec.state})`);
    }
    live.abort.abort();
    await live.done;
    return this.get(runId);
  }

  /** Waits for a run to end (or returns at once if it has). */
  async wait(runId: string): Promise<RunRecord> {
    await this.active.get(runId)?.done;
    return this.get(runId);
  }

  async stopAll(): Promise<void> {
    for (const r of this.active.values()) r.abort.abort();
    await Promise.all([...this.active.values()].map((r) => r.done));
  }
}

/** The session's `info.model` (what its adapter did with the requested model), if it reported one. */
function modelOutcome(sessions: SessionRuntime, id: string): StepRecord["model"] | undefined {
  try {
    const m = sessions.describe(sessions.get(id)).info?.model as StepRecord["model"] | undefined;
    return m && typeof m === "object" && typeof m.applied === "boolean" ? m : undefined;
  } catch {
    return undefined;
  }
}
