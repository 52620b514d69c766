/**
 * Keeps the sidecar child running: forks it with an IPC channel, replays what it must know
 * (`configure`, then every live `grant`, then `listen`) at each start, and restarts it with
 * backoff when it dies (200 ms doubling to 10 s; a child that lived 30 s starts the backoff over).
 * A restart binds the port the last child had, so the base URLs handed to sessions stay valid.
 * Stopping sends SIGTERM, then SIGKILL after 3 s. The child exits by itself when the channel closes
 * (the daemon died), so it never outlives the daemon.
 */
import { fork, type ChildProcess } from "node:child_process";
import type { Logger } from "../runtime/logger.js";
import type { ChildMessage, ParentMessage } from "./protocol.js";

export type SidecarState = "starting" | "running" | "restarting" | "stopped" | "failed";

export interface SidecarStatus {
  state: SidecarState;
  pid?: number;
  port?: number;
  restarts: number;
  /** ISO time the current child began listening. */
  since?: string;
  lastExit?: { code: number | null; signal: string | null; at: string };
  lastError?: string;
}

export interface SupervisorOptions {
  entry: string;
  /** The port to bind first (0: any free port; a restart then binds the one it got). */
  port: number;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** What a fresh child is told before `listen`: `configure` first, then the grants. */
  replay(): ParentMessage[];
  onMessage(msg: ChildMessage): void;
  /** Called each time a child listens (after a restart too). */
  onListening?(port: number): void;
  now?(): number;
}

const BACKOFF_START_MS = 200;
const BACKOFF_MAX_MS = 10_000;
const STABLE_MS = 30_000;
const KILL_AFTER_MS = 3_000;

export class SidecarSupervisor {
  private child: ChildProcess | undefined;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private backoff = BACKOFF_START_MS;
  private startedAt = 0;
  private port: number;
  private readonly st: SidecarStatus = { state: "stopped", restarts: 0 };
  private firstListen: { resolve: (port: number) => void; reject: (err: Error) => void } | undefined;

  constructor(private readonly opts: SupervisorOptions) {
    this.port = opts.port;
  }

  /** Starts the child; resolves with the port once it listens, rejects if the first bind fails. */
  start(): Promise<number> {
    this.stopping = false;
    return new Promise<number>((resolve, reject) => {
      this.firstListen = { resolve, reject };
      this.spawn();
    });
  }

  status(): SidecarStatus {
    return { ...this.st, ...(this.st.lastExit ? { lastExit: { ...this.st.lastExit } } : {}) };
  }

  /** The port sessions are told (the bound one, or the one a restart will bind). */
  get boundPort(): number | undefined {
    return this.st.port;
  }

  send(msg: ParentMessage): void {
    const c = this.child;
    if (c?.connected && this.st.state === "running")
      c.send(
        msg,
        (err) => err && this.opts.logger.debug?.("llm-endpoint message not delivered", { error: err.message }),
      );
  }

  /** Sends to a child that may not be running yet (replay covers it after a restart). */
  private sendRaw(c: ChildProcess, msg: ParentMessage): void {
    if (c.connected) c.send(msg, () => undefined);
  }

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  private spawn(): void {
    this.st.state = this.st.restarts > 0 || this.st.lastExit ? "restarting" : "starting";
    let child: ChildProcess;
    try {
      child = fork(this.opts.entry, [], {
        stdio: ["ignore", "ignore", "pipe", "ipc"],
        env: this.opts.env,
        serialization: "json",
      });
    } catch (err) {
      this.failed((err as Error).message);
      return;
    }
    this.child = child;
    this.startedAt = this.now();
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (text: string) => {
      for (const line of text.split("\n"))
        if (line.trim()) this.opts.logger.warn("llm-endpoint sidecar: " + line.slice(0, 500));
    });
    child.on("message", (msg: ChildMessage) => this.onChildMessage(child, msg));
    child.on("error", (err) => this.opts.logger.warn("llm-endpoint sidecar process error", { error: err.message }));
    child.on("exit", (code, signal) => this.onExit(child, code, signal));
    for (const m of this.opts.replay()) this.sendRaw(child, m);
    this.sendRaw(child, { type: "listen", port: this.port });
  }

  private onChildMessage(child: ChildProcess, msg: ChildMessage): void {
    if (child !== this.child) return;
    if (msg.type === "listening") {
      this.port = msg.port;
      Object.assign(this.st, {
        state: "running",
        pid: msg.pid,
        port: msg.port,
        since: new Date(this.now()).toISOString(),
      });
      delete this.st.lastError;
      this.firstListen?.resolve(msg.port);
      this.firstListen = undefined;
      this.opts.onListening?.(msg.port);
      return;
    }
    if (msg.type === "listen-failed") {
      const text = `cannot listen on 127.0.0.1:${msg.port} (${msg.code}): ${msg.message}`;
      this.st.lastError = text;
      if (this.firstListen) {
        this.firstListen.reject(new Error(text));
        this.firstListen = undefined;
        this.stopping = true;
        this.st.state = "failed";
      }
      child.kill("SIGKILL");
      return;
    }
    this.opts.onMessage(msg);
  }

  private onExit(child: ChildProcess, code: number | null, signal: string | null): void {
    if (child !== this.child) return;
    this.child = undefined;
    this.st.lastExit = { code, signal, at: new Date(this.now()).toISOString() };
    delete this.st.pid;
    if (this.stopping) {
      if (this.st.state !== "failed") this.st.state = "stopped";
      return;
    }
    if (this.firstListen) {
      this.firstListen.reject(
        new Error(`the llm-endpoint sidecar exited before it listened (code ${code}, signal ${signal})`),
      );
      this.firstListen = undefined;
    }
    if (this.now() - this.startedAt >= STABLE_MS) this.backoff = BACKOFF_START_MS;
    const wait = this.backoff;
    this.backoff = Math.min(this.backoff * 2, BACKOFF_MAX_MS);
    this.st.state = "restarting";
    this.opts.logger.warn("llm-endpoint sidecar exited; restarting", { code, signal, inMs: wait });
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.stopping) return;
      this.st.restarts++;
      this.spawn();
    }, wait);
    this.timer.unref();
  }

  private failed(message: string): void {
    this.st.state = "failed";
    this.st.lastError = message;
    this.firstListen?.reject(new Error(message));
    this.firstListen = undefined;
  }

  /** Stops the child (SIGTERM, then SIGKILL) and any pending restart. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const c = this.child;
    if (!c || c.exitCode !== null || c.signalCode !== null) {
      if (this.st.state !== "failed") this.st.state = "stopped";
      return;
    }
    const exited = new Promise<void>((r) => c.once("exit", () => r()));
    c.kill("SIGTERM");
    const killer = setTimeout(() => c.kill("SIGKILL"), KILL_AFTER_MS);
    await exited;
    clearTimeout(killer);
    this.st.state = "stopped";
  }
}
