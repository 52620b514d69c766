/**
 * `GET /status`: what `svc status` shows of a running daemon (and the dashboard reads), gathered
 * from the services already running and never by scanning files or loading anything: sessions by
 * activity, sentinels by status and target, the targets' pending and dead deliveries, the adapters
 * loaded and those that failed, the pairings with their links and the tunnel, and the warnings.
 * It answers in about a millisecond with thousands of sentinels (test/bench `cli`).
 */
import type { DependencyContainer } from "tsyringe";
import { remoteSummary, type RemoteSummary } from "../remote/module.js";
import { SESSIONS } from "../sessions/runtime.js";
import type { SentinelSummary } from "../sentinels/service.js";
import { CONFIG, LISTEN, PLUGINS, ROUTES, SENTINELS, resolve, type Token } from "../tokens.js";
import { STORE } from "../store/tokens.js";
import { SVC_VERSION } from "../version.js";
import type { DaemonModule } from "./module.js";
import { keptTokenWarning } from "./open-door.js";

export interface DaemonStatus {
  version: string;
  pid: number;
  bind: string;
  port: number;
  startedAt: number;
  uptimeMs: number;
  warnings: string[];
  sessions: { total: number; running: number; attention: number; quiet: number; ended: number };
  sentinels: Omit<SentinelSummary, "deliveries">;
  deliveries: SentinelSummary["deliveries"];
  adapters: {
    /** The built-in packages loaded (one per manifests/builtin file; a failed one is in `failed`). */
    builtin: number;
    /** The packages of config `adapters` that loaded. */
    loaded: Array<{ package: string; version?: string; plugins: string[] }>;
    failed: Array<{ package: string; phase: string; message: string }>;
  };
  remote: RemoteSummary;
  /** Where sentinels live: the files under $SVC_HOME, or the team's PostgreSQL (host:port/database, never a password). */
  store: { kind: "file" } | { kind: "postgres"; where: string };
}

export const statusModule: DaemonModule = {
  name: "status",
  async start(c: DependencyContainer) {
    const startedAt = Date.now();
    resolve(c, ROUTES).add({
      method: "GET",
      path: "/status",
      auth: "loopback-or-token",
      handler: async () => ({ status: 200, body: await daemonStatus(c, startedAt) }),
    });
  },
};

const optional = <T>(c: DependencyContainer, tok: Token<T>): T | undefined =>
  c.isRegistered(tok as never, true) ? resolve(c, tok) : undefined;

async function daemonStatus(c: DependencyContainer, startedAt: number): Promise<DaemonStatus> {
  const config = resolve(c, CONFIG).current();
  const listen = resolve(c, LISTEN);
  const door = keptTokenWarning({ ...config.effective.daemon, bind: listen.bind });
  const { deliveries, ...sentinels } = (await optional(c, SENTINELS)?.summary()) ?? {
    total: 0,
    active: 0,
    expired: 0,
    byTarget: {},
    deliveries: { pending: 0, dead: 0 },
  };
  return {
    version: SVC_VERSION,
    pid: process.pid,
    bind: listen.bind,
    port: listen.port,
    startedAt,
    uptimeMs: Date.now() - startedAt,
    warnings: [...(door ? [door] : []), ...config.warnings],
    sessions: sessionCounts(c),
    sentinels,
    deliveries,
    adapters: adapterState(c),
    remote: await remoteSummary(c),
    store: storeFacts(c),
  };
}

function storeFacts(c: DependencyContainer): DaemonStatus["store"] {
  const store = optional(c, STORE);
  return store?.kind === "postgres" ? { kind: "postgres", where: store.where } : { kind: "file" };
}

function sessionCounts(c: DependencyContainer): DaemonStatus["sessions"] {
  const counts = { total: 0, running: 0, attention: 0, quiet: 0, ended: 0 };
  for (const s of optional(c, SESSIONS)?.list() ?? []) {
    counts.total++;
    counts[s.activity]++;
  }
  return counts;
}

/** How many built-ins loaded; the packages of config `adapters` that loaded, with their plugins; and every load failure. */
function adapterState(c: DependencyContainer): DaemonStatus["adapters"] {
  const plugins = resolve(c, PLUGINS);
  const loaded = new Map<string, DaemonStatus["adapters"]["loaded"][number]>();
  for (const p of plugins.list()) {
    if (p.source.builtin) continue;
    let entry = loaded.get(p.source.package);
    if (!entry) {
      entry = { package: p.source.package, ...(p.source.version ? { version: p.source.version } : {}), plugins: [] };
      loaded.set(p.source.package, entry);
    }
    entry.plugins.push(`${p.type}:${p.kind}`);
  }
  // A package is tried again when a plugin is looked up and missing (refresh.ts): its last failure stands.
  const failed = new Map(plugins.failures.map((f) => [f.package, f]));
  for (const p of loaded.keys()) failed.delete(p);
  return {
    builtin: plugins.builtinPackageCount(),
    loaded: [...loaded.values()],
    failed: [...failed.values()].map((f) => ({ package: f.package, phase: f.phase, message: f.error })),
  };
}
