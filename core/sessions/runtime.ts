import { stat } from "node:fs/promises";
import { isAbsolute } from "node:path";
import { inject, injectable } from "tsyringe";
import type { ConfigService } from "../config/config-service.js";
import { contextWindowOf } from "../config/model-catalog.js";
import {
  messagingPolicy,
  resolveSpawnDefaults,
  roleForDepth,
  type ResolvedSpawnDefaults,
} from "../config/spawn-defaults.js";
import type { DaemonEventBus } from "../daemon/event-bus.js";
import { SvcError } from "../errors.js";
import type {
  DeliveryRef,
  ParkedDelivery,
  PromptReceipt,
  PromptSender,
  PromptUrgency,
  SessionAdapterInstance,
  SessionHost,
  SpawnAuth,
} from "../plugin-api/sessions.js";
import type { Clock, Random } from "../runtime/clock.js";
import type { Logger } from "../runtime/logger.js";
import { updateJsonFile, readJsonFile } from "../storage/json-file.js";
import { CLOCK, CONFIG, DAEMON_EVENTS, LOGGER, RANDOM, token } from "../tokens.js";
import { spawnKey } from "../workspaces/idempotency.js";
import { attachTo, childDelegation, SESSION_TOKEN_ENV, type Grantor } from "../workspaces/lineage.js";
import { WORKSPACES, type WorkspaceService } from "../workspaces/workspace-service.js";
import { resolveAdapter, SESSION_ADAPTERS, type AdapterLookup } from "./adapter-lookup.js";
import { ContextContinuity } from "./context-continuity.js";
import { contextPolicy } from "./context-policy.js";
import { isSessionId, sessionFiles } from "./events-dir.js";
import { LiveSession, type LiveSessionHooks } from "./live-session.js";
import { markDaemon, markProcess } from "./process-mark.js";
import { describeSession } from "./describe.js";
import { StartingSessions } from "./starting.js";
import { TranscriptWriter } from "./transcript.js";
import { emptyModelUsage, type ModelAccess } from "./model-access.js";
import type { ModelCallNote, SessionTracing } from "./session-tracing.js";
import { fixedOf, recordOf, writeSessionRecord, type SessionRecord } from "./session-record.js";
import { readVerdict, writeVerdict } from "./verdict-file.js";
import type {
  AdapterSource,
  ContextUse,
  SessionDescriptor,
  SessionVerdict,
  StartRequest,
  StartResult,
  TurnResult,
} from "./types.js";
import { checkModelStall, checkStall, stalePrompts } from "./watchdog.js";

const MAX_ENDED = 500;

/**
 * The session runtime: starts sessions through adapter plugins (defaults merged), runs their
 * prompt queues, writes transcripts, and watches liveness. Offered to plugins as the host
 * service "sessions" ({@link SessionHost}).
 */
/** The session runtime (core/sessions). */
export const SESSIONS = token<SessionRuntime>("sessions");

@injectable()
export class SessionRuntime implements SessionHost {
  readonly eventsDir: string;
  private readonly sessions = new Map<string, LiveSession>();
  private readonly hooks: LiveSessionHooks;
  private readonly starting = new StartingSessions<LiveSession>();
  /** The model proxy, while core/llm-endpoint runs (model-access.ts). */
  private modelAccess: ModelAccess | undefined;
  /** Tracing, while core/tracing runs (session-tracing.ts). */
  private tracing: SessionTracing | undefined;
  private readonly context: ContextContinuity;

  constructor(
    @inject(CONFIG) private readonly config: ConfigService,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(RANDOM) private readonly random: Random,
    @inject(LOGGER) private readonly logger: Logger,
    @inject(DAEMON_EVENTS) private readonly events: DaemonEventBus,
    @inject(SESSION_ADAPTERS) private readonly adapters: AdapterLookup,
    @inject(WORKSPACES) readonly workspaces: WorkspaceService,
  ) {
    this.eventsDir = this.cfg().sessions.eventsDir;
    this.hooks = {
      now: () => this.clock.now(),
      onTurnEnded: (s, r) =>
        this.events.emit("session:turn-ended", {
          sessionId: s.id,
          promptId: r.promptId,
          stopReason: r.stopReason,
          ...(r.error ? { error: r.error } : {}),
        }),
      onExited: (s, unrun) => {
        this.events.emit("session:ended", { sessionId: s.id, exit: s.exit });
        void this.workspaces.ended(s.id);
        this.modelAccess?.close(s.id);
        this.pruneEnded();
        s.closing = this.parkUnrun(s, unrun).finally(async () => {
          await s.transcript.close();
          await s.terminal?.close();
        });
      },
      onQuota: (s, q) => this.onQuota(s, q),
      onUsage: (s, u) =>
        this.context.report(s, {
          model: typeof s.fixed.options.model === "string" ? s.fixed.options.model : "agent",
          inputTokens: u.used,
          window: u.size,
          source: "agent",
        }),
      modelCallsNoted: (s) => (s.modelHealth.proxied ? this.modelAccess?.noted?.(s.id) : undefined),
    };
    this.context = new ContextContinuity({
      policy: () => contextPolicy(this.cfg().defaults?.contextContinuity),
      emit: (type, data) => this.events.emit(type, data),
      logger: this.logger,
      promptId: () => `prm_${this.random.ulid()}`,
      now: () => this.clock.now(),
      continueFresh: (old, prompt) => this.continueFresh(old, prompt),
      stop: (id) => this.stop(id),
      park: (s, unrun) => this.parkUnrun(s, unrun),
    });
  }

  private cfg() {
    return this.config.current().effective;
  }

  /**
   * `via.adapters`: resolve the adapter through another lookup (run-swarm's per-run adapter walk).
   * `via.caller`: the session that asked for this spawn when no token says so (a run-swarm run
   * started by a session); it bounds the new session's delegation but is not made its parent.
   * `via.takeOver`: the session this one continues in a fresh context: the new one runs where it
   * ran and takes its worktree over.
   */
  async start(
    req: StartRequest,
    via: { adapters?: AdapterLookup; caller?: Grantor; takeOver?: LiveSession } = {},
  ): Promise<StartResult> {
    if (typeof req.adapter !== "string" || req.adapter === "")
      throw new SvcError(
        "invalid_input",
        "adapter is required: an adapter slug such as `gemini`, an acpAgents key, or `terminal`",
      );
    const cfg = this.cfg();
    const callerId = this.workspaces.tokens.sessionOf(req.callerToken);
    const parentId = attachTo(cfg.spawn.attach, callerId, req);
    const parent = parentId ? this.sessions.get(parentId) : undefined;
    if (parentId && !parent) throw new SvcError("not_found", `parent session ${parentId} does not exist`);
    const requestedCwd = req.cwd ?? parent?.fixed.cwd ?? process.cwd();
    if (!isAbsolute(requestedCwd))
      throw new SvcError("invalid_input", `cwd must be an absolute path, got ${JSON.stringify(requestedCwd)}`);
    if (!(await stat(requestedCwd).catch(() => undefined))?.isDirectory())
      throw new SvcError("invalid_input", `cwd ${requestedCwd} is not a directory`);
    const { instance, source } = await resolveAdapter(via.adapters ?? this.adapters, req.adapter);
    // The parent and the caller both bound the grant: `attach: false` or another `parentId` must not escape the caller's delegation.
    const granted = childDelegation(
      cfg,
      [parent && this.grantor(parent), this.grantorOf(callerId), via.caller],
      req.delegation,
    );
    const key = spawnKey(cfg.spawn.dedupe, req, parent?.id);
    const id = `ses_${this.random.ulid()}`;
    const registered = this.starting.open(id);
    const existing = key ? await this.claimKey(key, id) : undefined;
    if (existing) {
      registered.settle(undefined);
      return { descriptor: this.describe(existing), deduped: true };
    }
    let placed;
    try {
      placed = via.takeOver
        ? { cwd: via.takeOver.fixed.cwd, worktree: via.takeOver.fixed.worktree }
        : await this.workspaces.place({
            sessionId: id,
            cwd: requestedCwd,
            worktree: req.worktree,
            root: req.worktreeRoot,
            label: req.label,
            adapter: req.adapter,
            parent: parent && { cwd: parent.fixed.cwd, worktree: parent.fixed.worktree },
            usedBy: (path) =>
              [...this.sessions.values()].find(
                (s) =>
                  s.live && s.fixed.worktree?.path === path && s.fixed.worktree.slug !== undefined && s.worktreeOwner,
              )?.id,
          });
    } catch (err) {
      this.workspaces.keys.release(id);
      this.workspaces.released(id);
      registered.settle(undefined);
      throw err;
    }
    const cwd = placed.cwd;
    const merged = resolveSpawnDefaults(cfg, req.adapter, { options: req.options, skills: req.skills });
    const files = sessionFiles(this.eventsDir, id);
    const kind = source === "terminal" ? "terminal" : "agent";
    const depth = parent ? parent.fixed.depth + 1 : 0;
    const now = this.clock.now();
    const session = new LiveSession(
      {
        id,
        adapter: req.adapter,
        source,
        kind,
        label: req.label,
        name: req.name,
        cwd,
        parentId: parent?.id,
        depth,
        role: roleForDepth(cfg, depth),
        createdAt: now,
        options: merged.options,
        skills: merged.skills,
        auth: redactAuth(merged.auth),
        eventsPath: files.events,
        terminalPath: kind === "terminal" ? files.terminal : undefined,
        ...(placed.worktree ? { worktree: placed.worktree } : {}),
        ...(granted.delegation !== undefined ? { delegation: granted.delegation } : {}),
        ...(req.run ? { run: { runId: req.run.runId, stepId: req.run.stepId } } : {}),
      },
      new TranscriptWriter(files.events, () => this.clock.now()),
      kind === "terminal" ? new TranscriptWriter(files.terminal, () => this.clock.now()) : undefined,
      this.hooks,
    );
    session.worktreeOwner = placed.worktree !== undefined && placed.worktree.path !== parent?.fixed.worktree?.path;
    if (via.takeOver) {
      session.continuedFrom = via.takeOver.id;
      session.worktreeOwner = via.takeOver.worktreeOwner;
    }
    this.sessions.set(id, session);
    registered.settle(session);
    // The daemon mark already here: another daemon sharing eventsDir must not take a session that is still starting for an orphan (orphans.ts).
    session.transcript.append("session.starting", {
      adapter: req.adapter,
      source,
      kind,
      cwd,
      label: req.label,
      parentId: parent?.id,
      options: merged.options,
      skills: merged.skills,
      auth: session.fixed.auth,
      daemon: markDaemon(),
      ...(placed.worktree ? { worktree: placed.worktree } : {}),
      ...(granted.capped ? { note: granted.capped } : {}),
      ...(req.run ? { run: req.run } : {}),
      ...(session.continuedFrom ? { continuedFrom: session.continuedFrom } : {}),
    });
    session.traceEnv = await this.tracing?.open({
      sessionId: id,
      adapter: req.adapter,
      requested: req.extTracing,
      joins: parent?.id ?? via.caller?.id ?? callerId,
      createdAt: now,
      transcript: session.transcript,
      ...(typeof merged.options.model === "string" ? { model: merged.options.model } : {}),
      ...(req.run ? { run: req.run } : {}),
    });
    const launch = () => this.launch(session, instance, req, merged);
    const failed = (err: unknown) => {
      session.sink().exited({ code: null, signal: null, error: (err as Error).message });
      throw err;
    };
    if (placed.provision && placed.worktree) {
      const provision = placed.provision;
      const tree = placed.worktree;
      session.transcript.append("worktree.provisioning", {
        path: tree.path,
        install: provision.plan.install,
        copy: provision.plan.copy,
        setup: provision.plan.setup,
        from: provision.plan.source,
      });
      session.ready = this.workspaces
        .provision(id, tree, provision)
        .then(launch, failed)
        .catch((err: Error) => {
          if (session.live) session.sink().exited({ code: null, signal: null, error: err.message });
          this.logger.warn("session start failed", { sessionId: id, error: err.message });
          throw err;
        });
      session.ready.catch(() => undefined);
    } else {
      session.ready = launch().catch(failed);
      await session.ready;
    }
    const result = req.prompt
      ? this.prompt(id, req.prompt, { sender: { kind: "human" }, urgency: "queue" })
      : undefined;
    return { descriptor: this.describe(session), result };
  }

  /**
   * The live (or still starting) session holding `key`; when none does, `key` is claimed for `id`,
   * checked and claimed with no await between, so two identical spawns at once make one session.
   */
  private async claimKey(key: string, id: string): Promise<LiveSession | undefined> {
    for (;;) {
      const holder = this.workspaces.keys.holder(key, (h) => this.state(h) === "live" || this.starting.has(h));
      if (!holder) {
        this.workspaces.keys.claim(key, id);
        return undefined;
      }
      const s = this.sessions.get(holder) ?? (await this.starting.wait(holder));
      if (s) return s;
    }
  }

  private grantor(s: LiveSession): Grantor {
    return { id: s.id, ...(s.fixed.delegation !== undefined ? { delegation: s.fixed.delegation } : {}) };
  }

  /** A session (the caller, or a parent) as a grantor of delegation, if it is known. */
  grantorOf(id: string | undefined): Grantor | undefined {
    const s = id ? this.sessions.get(id) : undefined;
    return s ? this.grantor(s) : undefined;
  }

  /**
   * Runs an ended session again under its id from its record (resume.ts checked that it can be):
   * its transcript goes on after `at.lastSeq`, and the adapter's `resume` has the agent load its
   * conversation. Options and skills are the recorded ones; auth and the session token are new.
   */
  async relaunch(
    record: SessionRecord,
    at: { lastSeq: number; turns: number },
    instance: SessionAdapterInstance,
    source: AdapterSource,
  ): Promise<SessionDescriptor> {
    const { id, adapter } = record;
    if (this.state(id) === "live")
      throw new SvcError("conflict", `session ${id} is live: only an ended session can be resumed`);
    const merged = {
      ...resolveSpawnDefaults(this.cfg(), adapter, { options: record.options, skills: record.skills }),
      options: record.options,
      skills: record.skills,
    };
    const { events } = sessionFiles(this.eventsDir, id);
    const session = new LiveSession(
      fixedOf(record, events, { source, auth: redactAuth(merged.auth) }),
      new TranscriptWriter(events, () => this.clock.now(), at.lastSeq),
      undefined,
      this.hooks,
    );
    session.turns = at.turns;
    session.worktreeOwner = record.worktreeOwner ?? false;
    session.resumes = (record.resumes ?? 0) + 1;
    if (record.continuedFrom) session.continuedFrom = record.continuedFrom;
    session.verdict = await readVerdict(this.eventsDir, id, (path, reason) =>
      this.logger.error("a verdict file is damaged", { sessionId: id, path, reason }),
    );
    this.sessions.set(id, session);
    // Like `session.starting`, it carries the daemon mark: a new life begins (orphans.ts reads it so).
    session.transcript.append("session.resumed", {
      adapter,
      source,
      agentSessionId: record.agentSessionId,
      resumes: session.resumes,
      daemon: markDaemon(),
    });
    session.traceEnv = await this.tracing?.open({
      sessionId: id,
      adapter,
      requested: record.traced,
      joins: record.parentId,
      createdAt: this.clock.now(),
      transcript: session.transcript,
      ...(typeof record.options.model === "string" ? { model: record.options.model } : {}),
      ...(record.run ? { run: record.run } : {}),
    });
    session.ready = this.launch(session, instance, { adapter, name: record.name }, merged, record.agentSessionId).catch(
      (err: Error) => {
        session.sink().exited({ code: null, signal: null, error: err.message });
        throw err;
      },
    );
    await session.ready;
    this.events.emit("session:resumed", { sessionId: id, adapter, source, resumes: session.resumes });
    this.logger.info("session resumed", { sessionId: id, adapter, resumes: session.resumes });
    return this.describe(session);
  }

  /**
   * Starts the adapter's process for a session that is ready to run (its tree, if any, provisioned);
   * with `agentSessionId`, through the adapter's `resume`. The session's record is written once it runs.
   */
  private async launch(
    session: LiveSession,
    instance: SessionAdapterInstance,
    req: Pick<StartRequest, "adapter" | "argv" | "env" | "name">,
    merged: ResolvedSpawnDefaults,
    agentSessionId?: string,
  ): Promise<void> {
    const { id, cwd, worktree, source, kind } = session.fixed;
    if (!session.live) throw new SvcError("conflict", `session ${id} was stopped before its agent started`);
    const token = this.workspaces.tokens.issue(id, this.random.hex(24));
    const model = typeof merged.options.model === "string" ? merged.options.model : undefined;
    const shim = await this.workspaces.shim({
      sessionId: id,
      adapter: req.adapter,
      ...(model ? { model } : {}),
      workspace: worktree?.path ?? cwd,
    });
    if (session.stopRequested) {
      await this.workspaces.ended(id);
      throw new SvcError("conflict", `session ${id} was stopped before its agent started`);
    }
    // Through the model proxy, when it runs: its base URLs and the session's own token instead of any key it holds.
    const access = await this.modelAccess?.open({
      sessionId: id,
      ...(session.fixed.run ? { runId: session.fixed.run.runId } : {}),
      ...(merged.auth ? { auth: merged.auth } : {}),
    });
    const auth = access ? access.auth : merged.auth;
    session.modelHealth.proxied = access !== undefined;
    try {
      const spec = {
        sessionId: id,
        adapter: req.adapter,
        cwd,
        options: merged.options,
        skills: merged.skills,
        auth,
        argv: req.argv,
        env: { ...(req.env ?? {}), ...(access?.env ?? {}), ...(session.traceEnv ?? {}), [SESSION_TOKEN_ENV]: token },
        name: req.name,
        ...(shim ? { pathPrepend: [shim] } : {}),
      };
      if (agentSessionId !== undefined && !instance.resume)
        throw new SvcError("not_resumable", `adapter "${req.adapter}" cannot resume sessions`);
      session.handle = await (agentSessionId !== undefined
        ? instance.resume!({ ...spec, agentSessionId }, session.sink())
        : instance.start(spec, session.sink()));
    } catch (err) {
      this.modelAccess?.close(id);
      throw err;
    }
    if (session.stopRequested) {
      // A stop landed while the process was starting: nothing else holds it, so it is stopped here.
      await session.handle
        .stop()
        .catch((err: Error) => this.logger.warn("session stop failed", { sessionId: id, error: err.message }));
      this.modelAccess?.close(id);
      await this.workspaces.ended(id);
      throw new SvcError("conflict", `session ${id} was stopped while its agent was starting`);
    }
    if (session.state === "starting") session.state = "idle";
    // The marks let a later daemon life recognise the process if this daemon dies first (orphans.ts).
    const mark = markProcess(session.handle.pid);
    session.transcript.append("session.started", {
      pid: session.handle.pid,
      info: session.handle.info,
      ...(mark ? { process: mark } : {}),
      daemon: markDaemon(),
    });
    await writeSessionRecord(this.eventsDir, recordOf(session, session.resumes)).catch((err: Error) =>
      this.logger.warn("could not write the session's record: it cannot be shown or resumed after a restart", {
        sessionId: id,
        error: err.message,
      }),
    );
    this.events.emit("session:started", { sessionId: id, adapter: req.adapter, source, kind });
    this.logger.info("session started", { sessionId: id, adapter: req.adapter, source, pid: session.handle.pid });
    session.pump();
  }

  /** Resolves when the session's agent has started (after provisioning); rejects with the start's error. */
  async ready(sessionId: string): Promise<SessionDescriptor> {
    const s = this.get(sessionId);
    await s.ready;
    return this.describe(s);
  }

  /** Queues, steers or interrupts; the caller has applied the messaging policy to `urgency`. */
  prompt(
    sessionId: string,
    text: string,
    opts: { sender: PromptSender; urgency: PromptUrgency; requested?: PromptUrgency; note?: string; ref?: DeliveryRef },
  ): PromptReceipt {
    const s = this.live(sessionId);
    if (s.refusal) throw new SvcError("conflict", s.refusal);
    if (typeof text !== "string" || text.trim() === "")
      throw new SvcError("invalid_input", "prompt text must be a non-empty string");
    const promptId = `prm_${this.random.ulid()}`;
    if (s.fixed.kind === "terminal") {
      if (!s.handle?.write) throw new SvcError("invalid_input", `terminal session ${sessionId} takes no input`);
      s.handle.write(text.endsWith("\n") ? text : text + "\n");
      s.transcript.append("input", { promptId, sender: opts.sender, bytes: Buffer.byteLength(text) });
      s.settle({ promptId, stopReason: "written", text: "" });
      return { promptId, sessionId, delivery: "started", position: 0 };
    }
    if (s.handle && !s.handle.prompt)
      throw new SvcError("invalid_input", `session ${sessionId} (adapter ${s.fixed.adapter}) takes no prompts`);
    const pending = {
      promptId,
      text,
      sender: opts.sender,
      urgency: opts.urgency,
      enqueuedAt: this.clock.now(),
      staleNotified: false,
      ...(opts.ref ? { ref: opts.ref } : {}),
    };
    return s.enqueue(pending, opts.requested, opts.note);
  }

  /** SessionHost: a delivery from a non-human sender, under `defaults.messaging.agentInterrupt`. */
  async deliver(
    sessionId: string,
    text: string,
    opts: { sender: PromptSender; urgency: PromptUrgency; ref?: DeliveryRef },
  ): Promise<PromptReceipt> {
    const s = this.live(sessionId);
    if (s.refusal && opts.ref) {
      // A hard-stopped session takes no prompts: a sentinel's event is kept, as for an ended session.
      await this.park(sessionId, { ...opts.ref, text, parkedAt: this.clock.now(), reason: s.refusal });
      return { promptId: "", sessionId, delivery: "parked", position: 0 };
    }
    return this.prompt(sessionId, text, {
      ...this.applyInterruptPolicy(opts.sender, opts.urgency),
      ...(opts.ref ? { ref: opts.ref } : {}),
    });
  }

  /** Keeps at most MAX_ENDED ended sessions in memory (their transcripts stay on disk). */
  private pruneEnded(): void {
    const ended = [...this.sessions.values()].filter((x) => !x.live);
    for (const old of ended.slice(0, Math.max(0, ended.length - MAX_ENDED))) this.sessions.delete(old.id);
  }

  /** Sentinel prompts that never ran because the session ended are parked, not lost. */
  private async parkUnrun(s: LiveSession, unrun: LiveSession["queue"]): Promise<void> {
    for (const p of unrun) {
      if (!p.ref) continue;
      await this.park(s.id, {
        ...p.ref,
        text: p.text,
        parkedAt: this.clock.now(),
        reason: "the session ended before this prompt ran",
      }).catch((err: Error) =>
        this.logger.error("could not park an undelivered prompt", {
          sessionId: s.id,
          sentinel: p.ref!.sentinelId,
          event: p.ref!.eventId,
          error: err.message,
        }),
      );
    }
  }

  /** Human senders keep interrupt; others are cut back to steer when `agentInterrupt` is `deny`. */
  applyInterruptPolicy(
    sender: PromptSender,
    urgency: PromptUrgency,
  ): { sender: PromptSender; urgency: PromptUrgency; requested?: PromptUrgency; note?: string } {
    if (urgency !== "interrupt" || sender.kind === "human") return { sender, urgency };
    if (messagingPolicy(this.cfg()).agentInterrupt === "allow") return { sender, urgency };
    return {
      sender,
      urgency: "steer",
      requested: "interrupt",
      note: "interrupt denied by defaults.messaging.agentInterrupt (deny): delivered as steer",
    };
  }

  waitFor(sessionId: string, promptId: string): Promise<TurnResult> {
    return this.get(sessionId).waitFor(promptId);
  }

  async stop(sessionId: string): Promise<SessionDescriptor> {
    const s = this.get(sessionId);
    if (s.live) {
      // Marked first: the adapter usually reports the exit itself, and that report must say "stopped".
      s.stopRequested = true;
      s.transcript.append("session.stopping", {});
      if (!s.handle)
        this.workspaces.cancel(
          s.id,
          new SvcError("conflict", `session ${s.id} was stopped before its worktree was provisioned`),
        );
      await s.handle
        ?.stop()
        .catch((err: Error) => this.logger.warn("session stop failed", { sessionId, error: err.message }));
      s.sink().exited({ code: null, signal: "SIGTERM" });
    }
    await s.closing;
    return this.describe(s);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.sessions.values()].filter((s) => s.live).map((s) => this.stop(s.id)));
  }

  state(sessionId: string): "live" | "ended" | "unknown" {
    const s = this.sessions.get(sessionId);
    return !s ? "unknown" : s.live ? "live" : "ended";
  }

  get(sessionId: string): LiveSession {
    const s = this.sessions.get(sessionId);
    if (!s)
      throw new SvcError("not_found", `no session ${sessionId} in this daemon; list them with \`svc sessions list\``);
    return s;
  }

  private live(sessionId: string): LiveSession {
    const s = this.get(sessionId);
    if (!s.live) throw new SvcError("conflict", `session ${sessionId} has ended`);
    return s;
  }

  describe(s: LiveSession): SessionDescriptor {
    const cfg = this.cfg();
    const provisioning = this.workspaces.provisioning(s.id);
    return {
      ...describeSession(s, this.clock.now(), {
        attentionDelayMs: (cfg.sessions?.attentionDelaySec ?? 60) * 1000,
        staleMs: messagingPolicy(cfg).pendingPromptStaleMinutes * 60_000,
      }),
      ...(provisioning ? { provisioning } : {}),
    };
  }

  list(): SessionDescriptor[] {
    return [...this.sessions.values()].map((s) => this.describe(s));
  }

  /** Sessions in the same family as `id` (for the messaging policy). */
  relation(fromId: string, toId: string): "self" | "parent" | "child" | "sibling" | "unrelated" {
    if (fromId === toId) return "self";
    const a = this.get(fromId).fixed;
    const b = this.get(toId).fixed;
    if (a.parentId === b.id) return "parent";
    if (b.parentId === a.id) return "child";
    if (a.parentId === b.parentId) return "sibling";
    return "unrelated";
  }

  /** Watchdog and stale-prompt pass; the module calls it on an interval, tests call it with a fake clock. */
  tick(): void {
    const cfg = this.cfg();
    const now = this.clock.now();
    const threshold = cfg.daemon.turnStallAfterMs;
    const staleMs = messagingPolicy(cfg).pendingPromptStaleMinutes * 60_000;
    for (const s of this.sessions.values()) {
      if (checkStall(s, now, threshold) || checkModelStall(s, now, threshold)) {
        s.transcript.append("session.stalled", {
          stalledSinceMs: s.stalledSinceMs,
          lastTurnErrorMessage: s.lastTurnErrorMessage,
        });
        this.events.emit("session:stalled", {
          sessionId: s.id,
          stalledSinceMs: s.stalledSinceMs,
          ...(s.lastTurnErrorMessage ? { lastTurnErrorMessage: s.lastTurnErrorMessage } : {}),
        });
        this.logger.warn("session stalled", { sessionId: s.id, stalledSinceMs: s.stalledSinceMs });
      }
      for (const p of stalePrompts(s, now, staleMs)) this.notifyStale(s, p);
    }
  }

  private notifyStale(s: LiveSession, p: LiveSession["queue"][number]): void {
    p.staleNotified = true;
    const data = { sessionId: s.id, promptId: p.promptId, sender: p.sender, enqueuedAt: p.enqueuedAt };
    s.transcript.append("prompt.stale", data);
    this.events.emit("session:prompt-stale", data);
    const sender = p.sender.kind === "session" && p.sender.id ? this.sessions.get(p.sender.id) : undefined;
    if (sender?.live && sender.fixed.kind === "agent") {
      const text = `[svc notice] your message ${p.promptId} to session ${s.id} is still queued behind its in-flight turn (since ${new Date(p.enqueuedAt).toISOString()}).`;
      sender.enqueue({
        promptId: `prm_${this.random.ulid()}`,
        text,
        sender: { kind: "system" },
        urgency: "queue",
        enqueuedAt: this.clock.now(),
        staleNotified: true,
      });
    }
  }

  private onQuota(s: LiveSession, q: { profile: string; remaining: number; window: string }): void {
    const at = this.cfg().defaults?.contextContinuity?.handoffAtQuotaRemaining;
    if (at === undefined || q.remaining > at) return;
    const key = `${q.profile}\u0000${q.window}`;
    if (s.quotaWindowsSignalled.has(key)) return;
    s.quotaWindowsSignalled.add(key);
    const data = { sessionId: s.id, profile: q.profile, remaining: q.remaining, window: q.window, threshold: at };
    s.transcript.append("session.handoff-suggested", data);
    this.events.emit("session:handoff-suggested", data);
  }

  /** Lets the model proxy take part in session starts and ends (core/llm-endpoint), or stops it doing so. */
  useModelAccess(access: ModelAccess | undefined): void {
    this.modelAccess = access;
  }

  /** Lets tracing open sessions' traces and hear of their model calls (core/tracing), or stops it doing so. */
  useTracing(tracing: SessionTracing | undefined): void {
    this.tracing = tracing;
  }

  /** The model proxy carried one call of this session: counted on its descriptor. Unknown or pruned sessions are ignored. */
  noteModelCall(sessionId: string, call: ModelCallNote): void {
    const s = this.sessions.get(sessionId);
    if (!s) return;
    this.tracing?.modelCall(sessionId, call);
    const u = (s.modelUsage ??= emptyModelUsage());
    u.calls++;
    u.inputTokens += call.inputTokens;
    u.outputTokens += call.outputTokens;
    if (call.status >= 500 || call.status === 499) u.failed++;
    u.lastModel = call.model;
    u.lastCallAt = call.at;
    s.noteModelCall(call);
    // A call that the upstream answered tells the session's context use (count_tokens answers no call).
    if (call.status >= 200 && call.status < 300 && call.inputTokens > 0)
      this.reportContextUse(sessionId, { model: call.model, inputTokens: call.inputTokens, source: "llm-endpoint" });
  }

  /** The model proxy refused a call of this session (a budget, a rate, a hard stop): said in its transcript. */
  noteModelRefusal(sessionId: string, refusal: { reason: string; status: number; message: string }): void {
    const s = this.sessions.get(sessionId);
    if (!s) return;
    (s.modelUsage ??= emptyModelUsage()).refused++;
    if (s.live) s.transcript.append("llm.refused", refusal);
  }

  /**
   * A model call of the session reported its input tokens (the llm-endpoint sidecar calls this for
   * every call): its context use, under `defaults.contextContinuity`. A session that is not live
   * here is ignored; a model without a known window turns the policy off for the report.
   */
  reportContextUse(
    sessionId: string,
    report: { model: string; inputTokens: number; source: ContextUse["source"] },
  ): void {
    if (typeof report?.model !== "string" || report.model === "")
      throw new SvcError("invalid_input", "reportContextUse: model must be a non-empty model id");
    if (!Number.isFinite(report.inputTokens) || report.inputTokens < 0)
      throw new SvcError(
        "invalid_input",
        `reportContextUse: inputTokens must be a number >= 0, got ${String(report.inputTokens)}`,
      );
    const s = this.sessions.get(sessionId);
    if (s) this.context.report(s, { ...report, window: contextWindowOf(report.model) });
  }

  /** Starts the session that continues `old` in a fresh context, `prompt` (the handoff) queued first. */
  private async continueFresh(old: LiveSession, prompt: string): Promise<LiveSession> {
    const f = old.fixed;
    const parentLive = f.parentId !== undefined && this.sessions.has(f.parentId);
    const { descriptor } = await this.start(
      {
        adapter: f.adapter,
        cwd: f.cwd,
        options: f.options,
        skills: f.skills,
        label: f.label,
        name: f.name,
        dedupe: false,
        ...(parentLive ? { parentId: f.parentId } : { attach: false }),
        ...(f.delegation !== undefined ? { delegation: f.delegation } : {}),
      },
      { takeOver: old },
    );
    // Started: from now on the new session owns the worktree, so the old one's end does not free it.
    old.continuedAs = descriptor.id;
    old.worktreeOwner = false;
    if (f.worktree) this.workspaces.handOver(f.worktree.path, old.id, descriptor.id);
    this.prompt(descriptor.id, prompt, { sender: { kind: "system" }, urgency: "queue" });
    return this.get(descriptor.id);
  }

  /**
   * The session steward's verdict on a session (core/steward): kept on its descriptor, written to
   * `verdict.json` beside its transcript (atomically, so `sessions show` reads it after the daemon
   * forgot the session), said in a live session's transcript and emitted as `session:verdict`.
   */
  async recordVerdict(sessionId: string, v: SessionVerdict): Promise<SessionDescriptor> {
    const s = this.get(sessionId);
    await writeVerdict(this.eventsDir, s.id, v);
    s.verdict = v;
    if (s.live) s.transcript.append("steward.verdict", v);
    this.events.emit("session:verdict", { sessionId: s.id, ...v });
    return this.describe(s);
  }

  async park(sessionId: string, entry: ParkedDelivery): Promise<void> {
    if (!isSessionId(sessionId)) throw new SvcError("invalid_input", `invalid session id ${JSON.stringify(sessionId)}`);
    await updateJsonFile<ParkedDelivery[]>(sessionFiles(this.eventsDir, sessionId).parked, (cur) => {
      const list = cur ?? [];
      if (list.some((e) => e.sentinelId === entry.sentinelId && e.eventId === entry.eventId)) return undefined;
      return [...list, entry].slice(-1000);
    });
  }

  async parked(sessionId: string, sentinelId?: string): Promise<ParkedDelivery[]> {
    if (!isSessionId(sessionId)) return [];
    const list = (await readJsonFile<ParkedDelivery[]>(sessionFiles(this.eventsDir, sessionId).parked)) ?? [];
    return sentinelId ? list.filter((e) => e.sentinelId === sentinelId) : list;
  }
}

function redactAuth(auth: SpawnAuth | undefined): SessionDescriptor["auth"] {
  if (!auth) return undefined;
  return {
    ...(auth.mode ? { mode: auth.mode } : {}),
    ...(auth.provider ? { provider: auth.provider } : {}),
    ...(auth.token ? { hasToken: true } : {}),
    ...(auth.apiKey ? { hasApiKey: true } : {}),
  };
}
