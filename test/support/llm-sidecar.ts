/**
 * The BUILT llm-endpoint sidecar (dist/core/llm-endpoint/sidecar/main.js) as a real child process
 * with an IPC channel, driven the way the daemon drives it: configure, listen, grant. Collects the
 * child's messages (call records, refusals) for assertions.
 */
import { fork, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import type {
  BudgetSpec,
  CallRecord,
  ChildMessage,
  ParentMessage,
  RoleSpec,
  RouteSpec,
} from "../../core/llm-endpoint/protocol.js";
import { REPO_ROOT } from "./paths.js";

export const SIDECAR_MAIN = join(REPO_ROOT, "dist/core/llm-endpoint/sidecar/main.js");

type Configure = Extract<ParentMessage, { type: "configure" }>;
type Refused = Extract<ChildMessage, { type: "refused" }>;
type Stats = Extract<ChildMessage, { type: "stats" }>;

export interface SidecarOptions {
  /** The sidecar's main module (default: the built one under the repository's dist/). */
  entry?: string;
  routes: RouteSpec[];
  roles?: RoleSpec[];
  budgets?: BudgetSpec;
  upstreamTimeoutMs?: number;
  day?: { date: string; tokens: number };
}

export interface TestSidecar {
  child: ChildProcess;
  port: number;
  /** http://127.0.0.1:PORT */
  url: string;
  calls: CallRecord[];
  refusals: Refused[];
  /** Resolves with the n-th call record (1-based) once it has arrived. */
  call(n: number): Promise<CallRecord>;
  /** Once every earlier call's record is in (a stats round trip): a function awaiting the next record. */
  nextCall(): Promise<() => Promise<CallRecord>>;
  /** Resolves with the n-th refusal (1-based) once it has arrived. */
  refusal(n: number): Promise<Refused>;
  /** Sends configure again with these fields changed. */
  configure(patch: Partial<SidecarOptions>): void;
  grant(
    token: string,
    sessionId: string,
    opts?: { runId?: string; used?: { sessionTokens: number; runTokens: number } },
  ): void;
  revoke(token: string): void;
  block(sessionId: string, reason: string): void;
  stats(): Promise<Stats>;
  /** Round-trips a stats message: every message sent before it has been handled. */
  sync(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSidecar(opts: SidecarOptions): Promise<TestSidecar> {
  const child = fork(opts.entry ?? SIDECAR_MAIN, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const calls: CallRecord[] = [];
  const refusals: Refused[] = [];
  const listeners = new Set<(m: ChildMessage) => void>();
  child.on("message", (m: ChildMessage) => {
    if (m.type === "call") calls.push(m.record);
    if (m.type === "refused") refusals.push(m);
    for (const l of [...listeners]) l(m);
  });
  const until = <T>(check: () => T | undefined): Promise<T> =>
    new Promise((resolve, reject) => {
      const now = check();
      if (now !== undefined) return resolve(now);
      const onExit = () => reject(new Error("the sidecar exited"));
      const l = () => {
        const v = check();
        if (v === undefined) return;
        listeners.delete(l);
        child.off("exit", onExit);
        resolve(v);
      };
      listeners.add(l);
      child.once("exit", onExit);
    });
  let config: Configure = {
    type: "configure",
    routes: opts.routes,
    roles: opts.roles ?? [],
    budgets: opts.budgets ?? {},
    upstreamTimeoutMs: opts.upstreamTimeoutMs ?? 60_000,
    day: opts.day ?? { date: new Date().toISOString().slice(0, 10), tokens: 0 },
  };
  const send = (m: ParentMessage) => child.send(m);
  send(config);
  let lastMessage: ChildMessage | undefined;
  listeners.add((m) => (lastMessage = m));
  send({ type: "listen", port: 0 });
  const listening = await until(() =>
    lastMessage?.type === "listening" || lastMessage?.type === "listen-failed" ? lastMessage : undefined,
  );
  if (listening.type !== "listening") throw new Error(`sidecar failed to listen: ${JSON.stringify(listening)}`);
  let statsId = 0;
  const stats = (): Promise<Stats> => {
    const id = ++statsId;
    let got: Stats | undefined;
    const l = (m: ChildMessage) => {
      if (m.type === "stats" && m.id === id) got = m;
    };
    listeners.add(l);
    send({ type: "stats", id });
    return until(() => got).finally(() => listeners.delete(l));
  };
  const call = (n: number) => until(() => calls[n - 1]);
  return {
    child,
    port: listening.port,
    url: `http://127.0.0.1:${listening.port}`,
    calls,
    refusals,
    call,
    nextCall: async () => {
      await stats();
      const n = calls.length + 1;
      return () => call(n);
    },
    refusal: (n) => until(() => refusals[n - 1]),
    configure(patch) {
      config = {
        ...config,
        ...(patch.routes && { routes: patch.routes }),
        ...(patch.roles && { roles: patch.roles }),
        ...(patch.budgets && { budgets: patch.budgets }),
        ...(patch.upstreamTimeoutMs !== undefined && { upstreamTimeoutMs: patch.upstreamTimeoutMs }),
        ...(patch.day && { day: patch.day }),
      };
      send(config);
    },
    grant: (token, sessionId, o = {}) =>
      send({
        type: "grant",
        token,
        sessionId,
        ...(o.runId !== undefined && { runId: o.runId }),
        used: o.used ?? { sessionTokens: 0, runTokens: 0 },
      }),
    revoke: (token) => send({ type: "revoke", token }),
    block: (sessionId, reason) => send({ type: "block", sessionId, reason }),
    stats,
    sync: async () => {
      await stats();
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await exited;
    },
  };
}
