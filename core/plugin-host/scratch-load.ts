/**
 * Loading a package in a scratch host before anything relies on it (`svc adapters install`, and
 * any check that wants to know whether a package would load): a child process imports each entry
 * with the plugin host's own loader, checks each default export's shape, and runs each setup with a
 * timeout, on a scratch `$SVC_HOME` that is removed afterwards. A plugin that crashes or blocks its
 * process takes down only the child, which is killed when a step outlives its time.
 */
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PLUGIN_SETUP_TIMEOUT_MS } from "./context.js";
import type { LoadFailure } from "./registry.js";

/** What the scratch host tells its parent: the step it starts, or how it ended. */
export type ScratchMessage =
  | { step: "import" }
  | { step: "setup"; plugin: string }
  | { done: "ok"; plugins: string[] }
  | { done: "failed"; phase: LoadFailure["phase"]; error: string };

export type ScratchLoadReport =
  | { ok: true; plugins: string[] }
  | { ok: false; phase: LoadFailure["phase"]; error: string };

export interface ScratchLoadOptions {
  /** How long each plugin's setup may take (default the daemon's, 10 s). */
  setupTimeoutMs?: number;
  /** How long importing the entries may take (default 30 s). */
  importTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** Extra time the child gets past a step's own deadline to report it before it is killed. */
const GRACE_MS = 3_000;

/** Loads the package at `dir` (its manifest already valid) in a scratch host; never throws for the package's faults. */
export async function checkPackageLoads(dir: string, options: ScratchLoadOptions = {}): Promise<ScratchLoadReport> {
  const setupMs = options.setupTimeoutMs ?? PLUGIN_SETUP_TIMEOUT_MS;
  const importMs = options.importTimeoutMs ?? 30_000;
  const home = mkdtempSync(join(tmpdir(), "svc-scratch-host-"));
  const script = fileURLToPath(new URL("./scratch-host.js", import.meta.url));
  const env: NodeJS.ProcessEnv = { ...(options.env ?? process.env), SVC_HOME: home };
  delete env.SVC_INSTALL_DIR;
  try {
    return await new Promise<ScratchLoadReport>((settle) => {
      const child = fork(script, [dir, home, String(setupMs)], { env, stdio: ["ignore", "ignore", "pipe", "ipc"] });
      let stderr = "";
      child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2_000)));
      let step = "starting";
      let report: ScratchLoadReport | undefined;
      let timer: NodeJS.Timeout | undefined;
      const deadline = (ms: number, what: string) => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          report = {
            ok: false,
            phase: step.startsWith("setup") ? "setup" : "import",
            error: `${what} did not finish within ${ms / 1000} s (its process was stopped)`,
          };
          child.kill("SIGKILL");
        }, ms + GRACE_MS);
      };
      deadline(importMs, "importing its entries");
      child.on("message", (m: ScratchMessage) => {
        if ("step" in m) {
          step = m.step === "setup" ? `setup of ${m.plugin}` : "importing its entries";
          deadline(m.step === "setup" ? setupMs : importMs, step);
        } else {
          clearTimeout(timer);
          report = m.done === "ok" ? { ok: true, plugins: m.plugins } : { ok: false, phase: m.phase, error: m.error };
        }
      });
      child.on("error", (err) => {
        report ??= { ok: false, phase: "import", error: `cannot start the scratch host: ${err.message}` };
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        const tail = stderr.trim().split("\n").slice(-3).join(" | ");
        settle(
          report ?? {
            ok: false,
            phase: step.startsWith("setup") ? "setup" : "import",
            error: `its process ended (${signal ?? `exit code ${code}`}) during ${step}${tail ? `: ${tail}` : ""}`,
          },
        );
      });
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
