/**
 * Debian's PostgreSQL, started by the tests themselves: found under /usr/lib/postgresql/<v>/bin
 * (or on the PATH), installed with apt-get when missing (only as root, non-interactively), and run
 * in a fresh temporary data directory on a free loopback port, with password authentication for
 * the role `svc` (so a wrong password is a real refusal). PostgreSQL refuses to run as root: as
 * root the cluster is owned by and run as the `postgres` user the package creates.
 *
 * `findPostgres()` answers `{missing}` instead of throwing: a test file skips with that message
 * (`describe.skipIf`), never fails, when PostgreSQL cannot be had. Every server started is stopped
 * and its directory removed at process exit, whatever happened.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "./http.js";

export { freePort };

export interface PostgresBinaries {
  bin: string;
  version: string;
}

const ROLE = "svc";
const PASSWORD = "svc-test-password";

function which(command: string): string | undefined {
  const r = spawnSync("sh", ["-c", `command -v ${command}`], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function installed(): PostgresBinaries | undefined {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return { bin: join(root, versions[0], "bin"), version: versions[0] };
  }
  const initdb = which("initdb");
  return initdb ? { bin: join(initdb, ".."), version: "unknown" } : undefined;
}

let found: PostgresBinaries | { missing: string } | undefined;

/** PostgreSQL's binaries, installing Debian's package first when they are missing; or why there are none. */
export function findPostgres(): PostgresBinaries | { missing: string } {
  if (found) return found;
  const have = installed();
  if (have) return (found = have);
  if (process.getuid?.() !== 0)
    return (found = { missing: "PostgreSQL is not installed and the tests do not run as root to apt-get install it" });
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  let r = spawnSync("apt-get", ["install", "-y", "--no-install-recommends", "postgresql"], { env, encoding: "utf8" });
  if (r.status !== 0) {
    spawnSync("apt-get", ["update"], { env, encoding: "utf8" });
    r = spawnSync("apt-get", ["install", "-y", "--no-install-recommends", "postgresql"], { env, encoding: "utf8" });
  }
  const after = installed();
  if (after) return (found = after);
  return (found = {
    missing: `apt-get install -y postgresql failed (exit ${r.status ?? r.signal}): ${(r.stderr || r.stdout || "").trim().split("\n").slice(-2).join(" ")}`,
  });
}

/** The message a test file skips with, or undefined when PostgreSQL is available. */
export function postgresMissing(): string | undefined {
  const f = findPostgres();
  return "missing" in f ? `PostgreSQL unavailable, team-mode tests skipped: ${f.missing}` : undefined;
}

export interface PostgresServer {
  port: number;
  /** The cluster's directory (data directory and socket), removed by {@link destroy}. */
  readonly dir: string;
  /** The postmaster's pid while it runs (its backends are its children: CPU accounting in the bench). */
  readonly pid: number | undefined;
  /** A URL for database `db` (default `svc`) as the role `svc`, password included. */
  url(db?: string): string;
  /** The same URL with another password (a wrong-password test). */
  urlWithPassword(password: string, db?: string): string;
  /** Creates a database (owned by `svc`) and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** `pg_ctl stop -m <mode>` (fast: disconnects clients; immediate: no checkpoint, like a crash). */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  /** Starts it again on the same port and data directory. */
  start(): Promise<void>;
  /** Stops it and removes its data directory. */
  destroy(): Promise<void>;
}

const live = new Set<PostgresServer>();
process.once("exit", () => {
  for (const s of live) void s.destroy();
});

function asPostgres(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const uid = Number(spawnSync("id", ["-u", "postgres"], { encoding: "utf8" }).stdout.trim());
  const gid = Number(spawnSync("id", ["-g", "postgres"], { encoding: "utf8" }).stdout.trim());
  if (!Number.isInteger(uid) || !Number.isInteger(gid))
    throw new Error("running as root and there is no postgres user");
  return { uid, gid };
}

/**
 * Starts a fresh cluster. `fsync` stays on (a restart test means something); `settings` adds
 * `-c name=value` server settings.
 */
export async function startPostgres(settings: Record<string, string> = {}): Promise<PostgresServer> {
  const bins = findPostgres();
  if ("missing" in bins) throw new Error(bins.missing);
  const owner = asPostgres();
  const root = mkdtempSync(join(tmpdir(), "svc-pg-"));
  const data = join(root, "data");
  const pwfile = join(root, "pw");
  writeFileSync(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
  if (owner.uid !== undefined) {
    chownSync(root, owner.uid, owner.gid!);
    chownSync(pwfile, owner.uid, owner.gid!);
  }
  chmodSync(root, 0o700);
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(join(bins.bin, cmd), args, { ...owner, encoding: "utf8", cwd: root });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${(r.stderr || r.stdout).trim()}`);
  };
  run("initdb", [
    "-D",
    data,
    "-U",
    ROLE,
    `--pwfile=${pwfile}`,
    "--auth=scram-sha-256",
    "--encoding=UTF8",
    "--locale=C",
  ]);
  const port = await freePort();
  let child: ChildProcess | undefined;
  const args = [
    "-D",
    data,
    "-p",
    String(port),
    "-k",
    root,
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "max_connections=200",
    ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]),
  ];
  const url = (db = ROLE, password = PASSWORD) =>
    `postgres://${ROLE}:${encodeURIComponent(password)}@127.0.0.1:${port}/${db}`;

  const start = async () => {
    const proc = spawn(join(bins.bin, "postgres"), args, { ...owner, cwd: root, stdio: ["ignore", "ignore", "pipe"] });
    child = proc;
    let log = "";
    proc.stderr?.on("data", (d: Buffer) => {
      log = (log + d.toString()).slice(-4000);
    });
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`postgres exited (${proc.exitCode}): ${log}`);
      const client = new pg.Client({ connectionString: url("postgres"), connectionTimeoutMillis: 2000 });
      try {
        await client.connect();
        await client.end();
        return;
      } catch {
        await client.end().catch(() => undefined);
        if (Date.now() > deadline) throw new Error(`postgres did not accept connections within 60 s: ${log}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  const stop = async (mode: "fast" | "immediate" = "fast") => {
    const proc = child;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise<void>((r) => proc.once("exit", () => r()));
    // postgres: SIGTERM is "smart", SIGINT "fast", SIGQUIT "immediate".
    proc.kill(mode === "immediate" ? "SIGQUIT" : "SIGINT");
    await exited;
  };

  const server: PostgresServer = {
    port,
    dir: root,
    get pid() {
      return child && child.exitCode === null ? child.pid : undefined;
    },
    url: (db) => url(db),
    urlWithPassword: (password, db) => url(db, password),
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url("postgres") });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} OWNER ${ROLE}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    stop,
    start,
    async destroy() {
      live.delete(server);
      if (child && child.exitCode === null) {
        child.kill("SIGQUIT");
        await new Promise<void>((r) => (child!.exitCode !== null ? r() : child!.once("exit", () => r())));
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
  live.add(server);
  await start();
  await server.createDatabase(ROLE);
  return server;
}
