/**
 * Team mode with real processes: N daemons (`svc serve` as child processes, each with its own
 * SVC_HOME) on one PostgreSQL database (test/support/postgres.ts), the same SVC_STORE_URL and
 * SVC_STORE_KEY in each one's environment; a daemon killed -9 and started again on its home; the
 * database read from the test through `pg`. Without `server` the daemons run on the file store,
 * each on its own (the harness's own check).
 */
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { type DaemonProcess, makeTempHome, startDaemonProcess } from "./cli.js";
import { type PostgresServer, startPostgres } from "./postgres.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";

export interface TeamOptions {
  /** The PostgreSQL server (one per test file); without it the daemons use the file store. */
  server?: PostgresServer;
  /** The database created for this team (one per test, so tests do not see each other's rows). */
  database?: string;
  /** How many daemons (default 2). */
  daemons?: number;
  /** Written as each home's config.json. */
  config?: unknown;
  /** Extra environment for daemon `i`. */
  env?: (i: number) => NodeJS.ProcessEnv;
}

export interface Team {
  /** The database URL every daemon has in SVC_STORE_URL (password included: never log it). */
  readonly url: string | undefined;
  /** The team key (SVC_STORE_KEY). */
  readonly key: string;
  readonly homes: readonly string[];
  /** Daemon `i` as it runs now (the last one started on home `i`). */
  daemon(i: number): DaemonProcess;
  /** Starts daemon `i` on its home (after a kill, or the first time when `startTeam` was told `start: false`). */
  start(i: number): Promise<DaemonProcess>;
  /** kill -9 daemon `i` and wait for its exit. */
  kill9(i: number): Promise<void>;
  /** kill -9 daemon `i`, then start it again on its home. */
  restart(i: number): Promise<DaemonProcess>;
  /** Whether daemon `i` is running (not exited). */
  alive(i: number): boolean;
  /** Runs SQL on the team's database from the test. */
  sql<R extends Record<string, unknown> = Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
  /** Kills every daemon, ends the test's connections, removes the homes (the server stays up). */
  close(): Promise<void>;
}

let databases = 0;

/** Starts the team's daemons (all at once) unless `start` is false. */
export async function startTeam(opts: TeamOptions & { start?: boolean } = {}): Promise<Team> {
  const n = opts.daemons ?? 2;
  const url = opts.server
    ? await opts.server.createDatabase(opts.database ?? `team_${process.pid}_${++databases}`)
    : undefined;
  const key = randomBytes(32).toString("base64");
  const homes = await Promise.all(Array.from({ length: n }, (_, i) => makeTempHome(`svc-e2e-team-${i}-`)));
  if (opts.config !== undefined)
    await Promise.all(homes.map((h) => writeFile(join(h.home, "config.json"), JSON.stringify(opts.config))));
  const running: Array<DaemonProcess | undefined> = Array.from({ length: n });
  const pool = url ? new pg.Pool({ connectionString: url, max: 2 }) : undefined;
  // The pool's idle connections die when the test restarts the server: that is no test failure.
  pool?.on("error", () => undefined);
  const env = (i: number): NodeJS.ProcessEnv => ({
    ...(url ? { SVC_STORE_URL: url, SVC_STORE_KEY: key } : {}),
    ...opts.env?.(i),
  });
  const current = (i: number) => {
    const d = running[i];
    if (!d) throw new Error(`team daemon ${i} is not running`);
    return d;
  };
  const team: Team = {
    url,
    key,
    homes: homes.map((h) => h.home),
    daemon: current,
    async start(i) {
      running[i] = await startDaemonProcess({ home: homes[i]!.home, env: env(i) });
      return running[i]!;
    },
    async kill9(i) {
      await running[i]?.kill9();
    },
    async restart(i) {
      await team.kill9(i);
      return team.start(i);
    },
    alive: (i) => running[i]?.child.exitCode === null && running[i]?.child.signalCode === null,
    async sql(text, values) {
      if (!pool) throw new Error("this team runs on the file store: there is no database to query");
      return (await pool.query(text, values)).rows;
    },
    async close() {
      await Promise.all(running.map((d) => d?.kill9()));
      await pool?.end();
      await Promise.all(homes.map((h) => h.cleanup()));
    },
  };
  if (opts.start !== false) await Promise.all(homes.map((_, i) => team.start(i)));
  return team;
}

export interface TeamFixture {
  readonly server: PostgresServer;
  readonly team: Team;
  /** A Standard Webhooks receiver knowing the fixture's secret. */
  readonly rx: WebhookReceiver;
}

/**
 * Registers `beforeAll`/`afterAll` in the enclosing scope: one PostgreSQL server, a webhook
 * receiver knowing `secret`, a team on a fresh database (homes allowed to deliver to loopback),
 * all stopped and removed afterwards. Read the getters inside hooks and tests.
 */
export function useTeam(secret: string, opts: Omit<TeamOptions, "server"> & { start?: boolean } = {}): TeamFixture {
  let server: PostgresServer | undefined;
  let team: Team | undefined;
  let rx: WebhookReceiver | undefined;
  beforeAll(async () => {
    server = await startPostgres();
    rx = await startWebhookReceiver([secret]);
    team = await startTeam({ config: LOOPBACK_CONFIG, ...opts, server });
  }, 120_000);
  afterAll(async () => {
    await team?.close();
    await rx?.close();
    await server?.destroy();
  });
  const ready = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error("useTeam: read before beforeAll ran");
    return v;
  };
  return {
    get server() {
      return ready(server);
    },
    get team() {
      return ready(team);
    },
    get rx() {
      return ready(rx);
    },
  };
}

/** Creates a webhook sentinel on `daemon` (REST); resolves with its id, or fails with the daemon's answer. */
export async function createWebhookSentinel(
  daemon: DaemonProcess,
  spec: { subject: string; url: string; secret: string; provider?: string },
): Promise<string> {
  const res = await daemon.fetch("/sentinels", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      match: [{ subject: spec.subject }],
      until: { kind: "never" },
      provider: spec.provider ?? "agentpush",
      target: { kind: "webhook", url: spec.url, secret: spec.secret },
    }),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`creating a sentinel on ${daemon.baseUrl}: ${res.status} ${text}`);
  return (JSON.parse(text) as { id: string }).id;
}

/** The ids of the sentinels `daemon` lists. */
export async function listedSentinels(daemon: DaemonProcess): Promise<string[]> {
  const res = await daemon.fetch("/sentinels");
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /sentinels on ${daemon.baseUrl}: ${res.status} ${text}`);
  return (JSON.parse(text) as { sentinels: Array<{ id: string }> }).sentinels.map((s) => s.id);
}
