/**
 * Debian's `redis-server` for the peer: found on the PATH, installed with apt-get when missing (only
 * as root, non-interactively), and started on a free loopback port in a temp dir with
 * `appendonly yes` and `appendfsync always` (every write fsynced before Redis answers).
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { trackChild, trackDir, untrackDir } from "../children.js";
import { freePort } from "../../support/http.js";
import { pinned } from "../webhook-rig.js";

function which(command: string): string | undefined {
  const r = spawnSync("sh", ["-c", `command -v ${command}`], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** The path of `redis-server`, installing Debian's package first when it is missing; or why there is none. */
export function findRedis(): { path: string } | { missing: string } {
  const found = which("redis-server");
  if (found) return { path: found };
  if (process.getuid?.() !== 0)
    return { missing: "redis-server is not installed and the bench is not running as root to apt-get install it" };
  process.stdout.write("  redis-server is missing: apt-get install -y redis-server …\n");
  const r = spawnSync("apt-get", ["install", "-y", "redis-server"], {
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const after = which("redis-server");
  if (after) return { path: after };
  return {
    missing: `apt-get install -y redis-server failed (exit ${r.status ?? r.signal}): ${(r.stderr || r.stdout).trim().split("\n").slice(-2).join(" ")}`,
  };
}

export function redisVersion(path: string): string {
  return /v=(\S+)/.exec(execFileSync(path, ["--version"], { encoding: "utf8" }))?.[1] ?? "unknown";
}

export interface RedisServer {
  pid: number;
  port: number;
  stop(): Promise<void>;
}

/** Starts `redis-server` (on `cpus` when given) and resolves once it accepts connections. */
export async function startRedis(path: string, cpus?: string): Promise<RedisServer> {
  const dir = trackDir(await mkdtemp(join(tmpdir(), "svc-bench-redis-")));
  const port = await freePort();
  const config = [
    ["port", String(port)],
    ["bind", "127.0.0.1"],
    ["dir", dir],
    ["appendonly", "yes"],
    ["appendfsync", "always"],
    ["save", ""],
    ["maxmemory-policy", "noeviction"],
    ["daemonize", "no"],
  ].flatMap(([k, v]) => [`--${k}`, v!]);
  const [command, args] = pinned(cpus, path, config);
  const child = trackChild(spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] }));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start within 20 s: ${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer);
        child.stdout.off("data", onData);
        child.stderr.off("data", onData);
        resolve();
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited ${code} at start: ${output.slice(-500)}`));
    });
  });
  child.stdout.resume();
  child.stderr.resume();
  return {
    pid: child.pid!,
    port,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
      await rm(dir, { recursive: true, force: true });
      untrackDir(dir);
    },
  };
}
