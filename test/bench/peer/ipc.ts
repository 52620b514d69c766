/**
 * The peer bench's child processes: a node script under test/bench/peer/ spawned (pinned to CPUs
 * with taskset when asked) with an IPC channel, and called with request/answer messages. A child
 * exits when its parent goes away (the channel closes).
 */
import { spawn } from "node:child_process";
import { trackChild } from "../children.js";
import { pinned } from "../webhook-rig.js";

interface Request {
  seq: number;
  cmd: string;
  [key: string]: unknown;
}
type Answer = { seq: number; ok: true; result: unknown } | { seq: number; ok: false; error: string };

export interface ChildScript {
  pid: number;
  call<T>(cmd: string, args?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

/** Spawns `node <script>.js` (a sibling of this module in dist/) on `cpus` when given. */
export async function spawnScript(script: string, cpus?: string, env: NodeJS.ProcessEnv = {}): Promise<ChildScript> {
  const path = new URL(`./${script}.js`, import.meta.url).pathname;
  const [command, args] = pinned(cpus, process.execPath, [path]);
  const child = trackChild(
    spawn(command, args, { stdio: ["ignore", "inherit", "inherit", "ipc"], env: { ...process.env, ...env } }),
  );
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void; cmd: string }>();
  let seq = 0;
  const exited = new Promise<void>((r) =>
    child.once("exit", (code, signal) => {
      for (const p of pending.values())
        p.reject(new Error(`the bench's ${script} process exited (${signal ?? code}) during ${p.cmd}`));
      pending.clear();
      r();
    }),
  );
  child.on("message", (m: Answer) => {
    const p = pending.get(m.seq);
    if (!p) return;
    pending.delete(m.seq);
    if (m.ok) p.resolve(m.result);
    else p.reject(new Error(`${script} ${p.cmd}: ${m.error}`));
  });
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  return {
    pid: child.pid!,
    call: <T>(cmd: string, args: Record<string, unknown> = {}) =>
      new Promise<T>((resolve, reject) => {
        const s = ++seq;
        pending.set(s, { resolve: resolve as (v: unknown) => void, reject, cmd });
        child.send({ seq: s, cmd, ...args } satisfies Request);
      }),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** In a child script: answers the parent's requests with `handlers[cmd](request)`. */
export function serveParent(handlers: Record<string, (req: Record<string, unknown>) => Promise<unknown>>): void {
  process.on("disconnect", () => process.exit(0));
  process.on("message", (req: Request) => {
    const handler = handlers[req.cmd];
    const answer = (a: Answer) => process.send?.(a);
    if (!handler) return answer({ seq: req.seq, ok: false, error: `unknown command ${req.cmd}` });
    handler(req).then(
      (result) => answer({ seq: req.seq, ok: true, result }),
      (err: Error) => answer({ seq: req.seq, ok: false, error: err.stack ?? String(err) }),
    );
  });
}
