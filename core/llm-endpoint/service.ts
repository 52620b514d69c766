/**
 * The llm-endpoint in the daemon: runs the sidecar (supervisor.ts), gives each session started
 * while it runs a token of its own and the environment that sends its model calls through it
 * (session-env.ts), revokes the token when the session ends, and keeps what the sidecar reports:
 * the usage log (usage-log.ts), the totals the budgets count (per session, per swarm run, per
 * UTC day), the session's descriptor and transcript. Config changes are sent on; a new port
 * restarts the sidecar.
 */
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { ConfigService, EffectiveConfig } from "../config/config-service.js";
import type { DaemonEventBus } from "../daemon/event-bus.js";
import { SvcError } from "../errors.js";
import type { CredentialStore } from "../plugin-api/context.js";
import type { SpawnAuth } from "../plugin-api/sessions.js";
import type { Logger } from "../runtime/logger.js";
import type { ModelAccess } from "../sessions/model-access.js";
import type { SessionRuntime } from "../sessions/runtime.js";
import { utcDay, type CallRecord, type ChildMessage, type ParentMessage } from "./protocol.js";
import { sessionModelEnv } from "./session-env.js";
import { injectedKeys, routedProviders, sidecarSettings, type SidecarSettings } from "./settings.js";
import { SidecarSupervisor, type SidecarStatus } from "./supervisor.js";
import { readDay, UsageLog } from "./usage-log.js";

export interface LlmEndpointDeps {
  config: ConfigService;
  credentials: CredentialStore;
  env: NodeJS.ProcessEnv;
  home: string;
  logger: Logger;
  events: DaemonEventBus;
  sessions: SessionRuntime;
  now(): number;
}

interface Grant {
  token: string;
  sessionId: string;
  runId?: string;
}

export interface Totals {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** Tokens charged for calls whose usage never arrived (their reservations; see CallRecord.estimatedTokens). */
  estimatedTokens: number;
  refused: number;
}

const zero = (): Totals => ({ calls: 0, inputTokens: 0, outputTokens: 0, estimatedTokens: 0, refused: 0 });

function add(t: Totals, r: CallRecord): void {
  t.calls++;
  t.inputTokens += r.inputTokens;
  t.outputTokens += r.outputTokens;
  t.estimatedTokens += r.estimatedTokens ?? 0;
}

/** What the token budgets count of these totals. */
const budgetTokens = (t: Totals | undefined): number => (t ? t.inputTokens + t.outputTokens + t.estimatedTokens : 0);

function totalsOf(m: Map<string, Totals>, id: string): Totals {
  let t = m.get(id);
  if (!t) m.set(id, (t = zero()));
  return t;
}

/** The pseudo-session the steward's judge calls are counted under. */
export const STEWARD_GRANT = "steward";

/** How long `noted` waits for the sidecar's answer before it gives up. */
const NOTED_WAIT_MS = 1000;

export const SIDECAR_ENTRY = fileURLToPath(new URL("./sidecar/main.js", import.meta.url));

export class LlmEndpointService implements ModelAccess {
  private supervisor: SidecarSupervisor | undefined;
  private settings: SidecarSettings | undefined;
  private readonly grants = new Map<string, Grant>();
  /** Sessions whose calls are refused (context hard stop), with the reason. */
  private readonly blocked = new Map<string, string>();
  private readonly bySession = new Map<string, Totals>();
  private readonly byRun = new Map<string, Totals>();
  private day = { date: "", totals: zero(), damaged: 0 };
  private readonly log: UsageLog;
  /** The port the last sidecar bound. */
  private lastPort: number | undefined;
  private starting: Promise<void> | undefined;
  private unsubscribe: Array<() => void> = [];
  private enabled = false;
  /** `noted` round trips awaiting the sidecar's `stats` answer, by id. */
  private readonly roundTrips = new Map<number, () => void>();
  private nextRoundTrip = 0;

  constructor(private readonly d: LlmEndpointDeps) {
    this.log = new UsageLog(d.home);
  }

  private cfg(): EffectiveConfig {
    return this.d.config.current().effective;
  }

  /** Starts the sidecar and follows config and session events; resolves once it listens. */
  async start(): Promise<void> {
    if (this.enabled && this.starting && this.supervisor?.status().state !== "failed") return this.starting;
    this.enabled = true;
    this.d.sessions.useModelAccess(this);
    if (this.unsubscribe.length === 0) {
      this.unsubscribe.push(
        this.d.config.onChange(
          () =>
            void this.reconfigure().catch((err: Error) =>
              this.d.logger.error("llm-endpoint: applying the new config failed", { error: err.message }),
            ),
        ),
        this.d.events.subscribe((e) => {
          if (e.type !== "session:context-hard-stop") return;
          const data = e.data as { sessionId?: string; reason?: string } | undefined;
          if (data?.sessionId)
            this.supervisor?.send({
              type: "block",
              sessionId: data.sessionId,
              reason: data.reason ?? `session ${data.sessionId} was stopped by its context policy`,
            });
          if (data?.sessionId) this.blocked.set(data.sessionId, data.reason ?? "stopped by its context policy");
        }),
      );
    }
    this.starting = this.boot();
    return this.starting;
  }

  private async boot(): Promise<void> {
    await this.loadToday();
    this.settings = await sidecarSettings(this.cfg(), this.d.credentials, this.d.env);
    // Port 0 picks a port once: a sidecar started again (svc llm-endpoint start) binds it again, so
    // the sessions given its URL before reach it.
    const port = this.settings.port === 0 && this.lastPort ? this.lastPort : this.settings.port;
    this.supervisor = new SidecarSupervisor({
      entry: SIDECAR_ENTRY,
      port,
      logger: this.d.logger,
      env: childEnv(this.d.env),
      replay: () => this.replay(),
      onMessage: (m) => this.onMessage(m),
      onListening: (bound) => {
        this.lastPort = bound;
        this.d.logger.info("llm-endpoint sidecar listening", { port: bound });
      },
      now: this.d.now,
    });
    await this.supervisor.start();
  }

  /** Stops the sidecar; sessions started from now on call their providers directly. Live sessions keep the URL they were given. */
  async stop(): Promise<void> {
    this.enabled = false;
    this.d.sessions.useModelAccess(undefined);
    await this.starting?.catch(() => undefined);
    this.starting = undefined;
    await this.supervisor?.stop();
  }

  /** Releases everything at daemon stop. */
  async shutdown(): Promise<void> {
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
    await this.stop();
    await this.log.close();
  }

  status(): {
    enabled: boolean;
    sidecar: SidecarStatus;
    url?: string;
    routes: Array<{ name: string; provider: string; baseUrl: string; models: string[]; key: string | null }>;
    sessions: number;
    notProxied: Array<{ sessionId: string; adapter: string; why: string }>;
  } {
    const sidecar = this.supervisor?.status() ?? { state: "stopped" as const, restarts: 0 };
    const port = this.supervisor?.boundPort;
    return {
      enabled: this.enabled,
      sidecar,
      ...(port && this.enabled ? { url: `http://127.0.0.1:${port}` } : {}),
      routes: (this.settings?.routes ?? []).map((r) => ({
        name: r.name,
        provider: r.provider,
        baseUrl: r.baseUrl,
        models: r.models,
        key: r.key ? r.key.from : null,
      })),
      sessions: this.grants.size,
      notProxied: this.notProxied(),
    };
  }

  /** Live sessions whose agent does not take the sidecar's base URLs and token (its recipe's `modelProxy`). */
  private notProxied(): Array<{ sessionId: string; adapter: string; why: string }> {
    return this.d.sessions.list().flatMap((s) => {
      const m = s.info?.modelProxy as { proxied?: unknown; why?: unknown } | undefined;
      return s.state !== "ended" && m?.proxied === false
        ? [{ sessionId: s.id, adapter: s.adapter, why: typeof m.why === "string" ? m.why : "" }]
        : [];
    });
  }

  usage(filter: { sessionId?: string; runId?: string } = {}): {
    day: { date: string; damagedLines: number } & Totals;
    sessions: Record<string, Totals>;
    runs: Record<string, Totals>;
  } {
    const pick = (m: Map<string, Totals>, id?: string) =>
      Object.fromEntries([...m].filter(([k]) => id === undefined || k === id).map(([k, v]) => [k, { ...v }]));
    return {
      day: { date: this.day.date, damagedLines: this.day.damaged, ...this.day.totals },
      sessions: filter.runId && !filter.sessionId ? {} : pick(this.bySession, filter.sessionId),
      runs: filter.sessionId && !filter.runId ? {} : pick(this.byRun, filter.runId),
    };
  }

  // ModelAccess: called by the session runtime.

  async open(s: {
    sessionId: string;
    runId?: string;
    auth?: SpawnAuth;
  }): Promise<{ env: Record<string, string>; auth?: SpawnAuth } | undefined> {
    if (!this.enabled) return undefined;
    await this.starting?.catch(() => undefined);
    const port = this.supervisor?.boundPort;
    const settings = this.settings;
    if (!port || !settings) {
      const why = this.supervisor?.status().lastError ?? "it is not running";
      throw new SvcError(
        "unavailable",
        `features.llmEndpoint is on but its sidecar has no port (${why}): fix it (svc llm-endpoint status) or turn the feature off; the session was not started so that no provider key reaches it`,
      );
    }
    const token = `svc_llm_${randomBytes(24).toString("hex")}`;
    const grant: Grant = { token, sessionId: s.sessionId, ...(s.runId ? { runId: s.runId } : {}) };
    this.grants.set(s.sessionId, grant);
    this.supervisor!.send(this.grantMessage(grant));
    const cfg = this.cfg();
    const recipes = [...Object.values(cfg.acpAgents ?? {}), ...Object.values(cfg.terminalPresets ?? {})].map(
      (r) => (r as { env?: Record<string, string> }).env ?? {},
    );
    return sessionModelEnv({
      port,
      token,
      routed: routedProviders(settings.routes),
      keys: injectedKeys(settings),
      inherited: [process.env, this.d.env, ...recipes],
      ...(s.auth ? { auth: s.auth } : {}),
    });
  }

  /**
   * The session steward's way to its judge through the sidecar (docs/steward.md): a token of its
   * own (granted once, as the pseudo-session `steward`, so its calls show in usage and count against
   * the budgets like a session's) and the sidecar's chat-completions URL; undefined while the
   * sidecar is off or has no port.
   */
  async stewardChannel(): Promise<{ url: string; token: string } | undefined> {
    if (!this.enabled) return undefined;
    await this.starting?.catch(() => undefined);
    const port = this.supervisor?.boundPort;
    if (!port || !this.enabled) return undefined;
    let g = this.grants.get(STEWARD_GRANT);
    if (!g) {
      g = { token: `svc_llm_${randomBytes(24).toString("hex")}`, sessionId: STEWARD_GRANT };
      this.grants.set(STEWARD_GRANT, g);
      this.supervisor!.send(this.grantMessage(g));
    }
    return { url: `http://127.0.0.1:${port}/v1/chat/completions`, token: g.token };
  }

  close(sessionId: string): void {
    this.blocked.delete(sessionId);
    const g = this.grants.get(sessionId);
    if (!g) return;
    this.grants.delete(sessionId);
    this.supervisor?.send({ type: "revoke", token: g.token });
  }

  /**
   * A round trip to the sidecar (a `stats` message): its answer comes after every call record it
   * sent before it, so once it is in, every call that had ended is noted. A call's record is sent
   * before its client has the whole answer, so the calls of a turn its agent ended are all in.
   */
  noted(_sessionId: string): Promise<void> {
    const sup = this.supervisor;
    if (sup?.status().state !== "running") return Promise.resolve();
    const id = ++this.nextRoundTrip;
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.roundTrips.delete(id);
        resolve();
      };
      const timer = setTimeout(done, NOTED_WAIT_MS);
      timer.unref();
      this.roundTrips.set(id, done);
      sup.send({ type: "stats", id });
    });
  }

  private grantMessage(g: Grant): ParentMessage {
    const s = this.bySession.get(g.sessionId);
    const r = g.runId ? this.byRun.get(g.runId) : undefined;
    return {
      type: "grant",
      token: g.token,
      sessionId: g.sessionId,
      ...(g.runId ? { runId: g.runId } : {}),
      used: {
        sessionTokens: budgetTokens(s),
        runTokens: budgetTokens(r),
      },
    };
  }

  private configureMessage(): ParentMessage {
    const s = this.settings!;
    this.rollDay(this.d.now());
    return {
      type: "configure",
      routes: s.routes,
      roles: s.roles,
      budgets: s.budgets,
      upstreamTimeoutMs: s.upstreamTimeoutMs,
      day: { date: this.day.date, tokens: budgetTokens(this.day.totals) },
    };
  }

  /** What a fresh child is told before it listens. */
  private replay(): ParentMessage[] {
    return [
      this.configureMessage(),
      ...[...this.grants.values()].map((g) => this.grantMessage(g)),
      ...[...this.blocked]
        .filter(([id]) => this.grants.has(id))
        .map(([sessionId, reason]): ParentMessage => ({ type: "block", sessionId, reason })),
    ];
  }

  private async reconfigure(): Promise<void> {
    if (!this.enabled || !this.supervisor || !this.settings) return;
    const next = await sidecarSettings(this.cfg(), this.d.credentials, this.d.env);
    const portChanged = next.port !== this.settings.port;
    this.settings = next;
    if (portChanged) {
      await this.stop();
      await this.start();
      return;
    }
    this.supervisor.send(this.configureMessage());
  }

  private onMessage(m: ChildMessage): void {
    if (m.type === "call") return this.onCall(m.record);
    if (m.type === "stats") return this.roundTrips.get(m.id)?.();
    if (m.type !== "refused") return;
    for (const t of [
      totalsOf(this.bySession, m.sessionId),
      m.runId ? totalsOf(this.byRun, m.runId) : undefined,
      this.day.totals,
    ])
      if (t) t.refused++;
    this.d.sessions.noteModelRefusal(m.sessionId, { reason: m.reason, status: m.status, message: m.message });
  }

  private onCall(r: CallRecord): void {
    this.rollDay(Date.parse(r.at));
    add(this.day.totals, r);
    add(totalsOf(this.bySession, r.sessionId), r);
    if (r.runId) add(totalsOf(this.byRun, r.runId), r);
    this.d.sessions.noteModelCall(r.sessionId, r);
    this.log.append(r).catch((err: Error) =>
      this.d.logger.error("llm-endpoint: a usage record was not written", {
        sessionId: r.sessionId,
        error: err.message,
      }),
    );
  }

  private rollDay(at: number): void {
    const date = utcDay(at);
    if (date > this.day.date) this.day = { date, totals: zero(), damaged: 0 };
  }

  /** Today's totals from the usage log (the day budget counts calls made before a daemon restart). */
  private async loadToday(): Promise<void> {
    const date = utcDay(this.d.now());
    if (this.day.date === date) return;
    const read = await readDay(this.d.home, date);
    const totals = zero();
    for (const r of read.records) add(totals, r);
    this.day = { date, totals, damaged: read.damaged };
    if (read.damaged > 0)
      this.d.logger.warn("llm-endpoint: damaged lines in today's usage log; their calls are not counted", {
        date,
        damaged: read.damaged,
      });
    if (read.tornBytes > 0)
      this.d.logger.warn("llm-endpoint: a torn last line in today's usage log was dropped", {
        date,
        bytes: read.tornBytes,
      });
  }
}

/** The child's environment: the daemon's, without the provider keys (the child gets keys over IPC only). */
function childEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries({ ...process.env, ...env }))
    if (!/(_API_KEY|_AUTH_TOKEN|_OAUTH_TOKEN|TOKEN|SECRET)$/i.test(k)) out[k] = v;
  return out;
}
