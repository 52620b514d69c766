/**
 * Real-process helpers: a temporary SVC_HOME, the compiled CLI as a child process, and the
 * daemon as a child process found through its runtime.json.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { CLI_PATH } from "./paths.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function makeTempHome(
  prefix = "svc-test-",
  opts: { inMemory?: boolean } = {},
): Promise<{ home: string; cleanup(): Promise<void> }> {
  const home = await mkdtemp(join(opts.inMemory ? memoryTmpdir() : tmpdir(), prefix));
  // Retried: a child that outlived its test (a session's last transcript line) may still be
  // writing into the tree, which makes one pass fail with ENOTEMPTY.
  return { home, cleanup: () => rm(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }) };
}

/**
 * A tmpfs directory (Linux's /dev/shm) when there is a writable one, else the usual temp dir. For
 * tests whose subject is logic over many fsyncs, not durability: fsync and O_DSYNC writes cost
 * nothing there, where on a disk other processes are writing to each can take tens of ms. A
 * simulated crash (an instance abandoned, as kill -9 leaves files) loses nothing either way: the
 * page cache survives a process's death; only a power loss needs the fsyncs.
 */
function memoryTmpdir(): string {
  try {
    accessSync("/dev/shm", constants.W_OK);
    return statSync("/dev/shm").isDirectory() ? "/dev/shm" : tmpdir();
  } catch {
    return tmpdir();
  }
}

/** Environment for a child: no inherited SVC_* or colour variables unless given. */
export function childEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (
      k.startsWith("SVC_") ||
      k === "NO_COLOR" ||
      k === "FORCE_COLOR" ||
      k.startsWith("VITEST") ||
      k === "EXT_JUDGE_API_KEY"
    )
      continue;
    env[k] = v;
  }
  return { ...env, SVC_HOME: home, NO_COLOR: "1", ...extra };
}

export function runCli(
  args: string[],
  opts: { home: string; env?: NodeJS.ProcessEnv; cwd?: string; input?: string; timeoutMs?: number },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], {
      cwd: opts.cwd,
      env: childEnv(opts.home, opts.env),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`svc ${args.join(" ")} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(opts.input ?? "");
  });
}

export interface DaemonProcess {
  child: ChildProcess;
  home: string;
  port: number;
  baseUrl: string;
  /** The per-boot token from runtime.json. */
  token: string;
  logs(): string;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill9(): Promise<void>;
  /** fetch against the daemon with the per-boot token unless `auth: false`. */
  fetch(path: string, init?: RequestInit & { auth?: boolean }): Promise<Response>;
}

/** Starts `svc serve --port 0` on `home` and waits for its runtime.json. */
export async function startDaemonProcess(opts: {
  home: string;
  env?: NodeJS.ProcessEnv;
  args?: string[];
  timeoutMs?: number;
  cwd?: string;
}): Promise<DaemonProcess> {
  const child = spawn(process.execPath, [CLI_PATH, "serve", "--port", "0", ...(opts.args ?? [])], {
    env: childEnv(opts.home, opts.env),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let logs = "";
  child.stdout!.on("data", (d) => (logs += d));
  child.stderr!.on("data", (d) => (logs += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let info: { pid: number; port: number; token: string } | undefined;
  while (!info) {
    if (child.exitCode !== null) throw new Error(`daemon exited with ${child.exitCode} before listening:\n${logs}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`daemon did not start in time:\n${logs}`);
    }
    try {
      const parsed = JSON.parse(await readFile(join(opts.home, "runtime.json"), "utf8"));
      if (parsed.pid === child.pid) info = parsed;
    } catch {
      /* not yet */
    }
    if (!info) await new Promise((r) => setTimeout(r, 25));
  }
  const baseUrl = `http://127.0.0.1:${info.port}`;
  const token = info.token;
  return {
    child,
    home: opts.home,
    port: info.port,
    baseUrl,
    token,
    logs: () => logs,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
    kill9: async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    },
    fetch: (path, init = {}) => {
      const { auth = true, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (auth && !headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
      return fetch(baseUrl + path, { ...rest, headers });
    },
  };
}

/**
 * Runs `change` (a `svc config set`, a write of config.json) and waits until `daemon` has logged
 * that it reloaded config.json: the daemon takes a change up from its file watcher, not from the
 * CLI, so the next request may otherwise still meet the old configuration.
 */
export async function afterConfigReload<T>(daemon: DaemonProcess, change: () => Promise<T>): Promise<T> {
  const reloads = () => daemon.logs().split("config.json reloaded").length - 1;
  const before = reloads();
  const result = await change();
  const deadline = Date.now() + 60_000;
  while (reloads() <= before) {
    if (Date.now() > deadline) throw new Error(`the daemon did not reload config.json:\n${daemon.logs()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return result;
}

/** A directory a daemon runs on and how to remove it: a temp home, or a plugin-host sandbox. */
export interface DaemonHome {
  home: string;
  cleanup(): Promise<void>;
}

export interface UseDaemonProcessOptions<H extends DaemonHome> {
  /** Makes the home; by default `makeTempHome(prefix)`. */
  makeHome?: () => Promise<H>;
  /** The temp home's name prefix (only without `makeHome`). */
  prefix?: string;
  /** Written as the home's config.json before the daemon starts. */
  config?: unknown;
  /** Runs on the home before the daemon starts (after `config`); the env and args it returns are added to the daemon's. */
  setup?: (home: H) => Promise<{ env?: NodeJS.ProcessEnv; args?: string[] } | void>;
  env?: NodeJS.ProcessEnv;
  args?: string[];
}

export interface DaemonFixture<H extends DaemonHome> {
  /** The home's directory (SVC_HOME). */
  readonly home: string;
  /** What `makeHome` made (the temp home by default), for sandbox helpers. */
  readonly sandbox: H;
  /** The daemon started last. */
  readonly daemon: DaemonProcess;
  /**
   * Starts another daemon on the same home with the same env and args (stopping the current one
   * first unless it already exited, e.g. after `kill9()`): restart and crash tests.
   */
  start(): Promise<DaemonProcess>;
}

/**
 * Registers `beforeAll`/`afterAll` in the enclosing scope (the file or a describe): a fresh home,
 * prepared by `config`/`setup`, a daemon started on it, then the daemon stopped and the home removed.
 * Read the returned getters inside hooks and tests, not while the file is being collected.
 */
export function useDaemonProcess<H extends DaemonHome = DaemonHome>(
  opts: UseDaemonProcessOptions<H> = {},
): DaemonFixture<H> {
  let sandbox: H | undefined;
  let daemon: DaemonProcess | undefined;
  let launch: { env?: NodeJS.ProcessEnv; args: string[] } | undefined;
  const start = async (): Promise<DaemonProcess> => {
    const { home } = ready(sandbox, "home");
    await daemon?.stop();
    daemon = await startDaemonProcess({ home, ...ready(launch, "daemon") });
    return daemon;
  };
  beforeAll(async () => {
    sandbox = await (opts.makeHome ? opts.makeHome() : (makeTempHome(opts.prefix) as Promise<H>));
    if (opts.config !== undefined) await writeFile(join(sandbox.home, "config.json"), JSON.stringify(opts.config));
    const extra = (await opts.setup?.(sandbox)) ?? {};
    launch = {
      env: opts.env || extra.env ? { ...opts.env, ...extra.env } : undefined,
      args: [...(opts.args ?? []), ...(extra.args ?? [])],
    };
    await start();
  });
  afterAll(async () => {
    await daemon?.stop();
    await sandbox?.cleanup();
  });
  const ready = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`useDaemonProcess: ${what} read before beforeAll ran`);
    return v;
  };
  return {
    get home() {
      return ready(sandbox, "home").home;
    },
    get sandbox() {
      return ready(sandbox, "sandbox");
    },
    get daemon() {
      return ready(daemon, "daemon");
    },
    start,
  };
}
