/**
 * The real coding agents for the live tests (test/plugins/acp/real-agents/): installed from the
 * npm registry by scripts/install-agents.sh at the versions test/support/real-agents.json pins,
 * beside a Node 24 binary, into a cache shared by every run on the machine. A daemon started with
 * `PATH` = {@link RealAgents.path} finds `claude-agent-acp`, `codex-acp` and `gemini` exactly as
 * svc's catalog names them, and their `#!/usr/bin/env node` runs Node 24.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./paths.js";

export const AGENT_PINS: Readonly<Record<string, string>> = JSON.parse(
  readFileSync(join(REPO_ROOT, "test/support/real-agents.json"), "utf8"),
);

export interface RealAgents {
  dir: string;
  /** The folder of the agents' binaries and Node 24's, to put first on a daemon's PATH. */
  bin: string;
  /** `bin` first, then the test process's PATH. */
  path: string;
}

/** Why the agents cannot be installed here when the registry cannot be reached, else undefined. */
export type AgentsOrSkip = { agents: RealAgents } | { skip: string };

let installing: Promise<AgentsOrSkip> | undefined;

/**
 * Installs (or finds in the cache) the pinned agents. Resolves `{ skip }` only when the npm
 * registry cannot be reached (the tests then say so loudly); any other install failure rejects.
 */
export function realAgents(): Promise<AgentsOrSkip> {
  installing ??= new Promise((resolve, reject) => {
    execFile(
      "bash",
      [join(REPO_ROOT, "scripts/install-agents.sh")],
      { cwd: REPO_ROOT, timeout: 20 * 60_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          const unreachable = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH|network/i.test(stderr);
          if (unreachable) return resolve({ skip: `the npm registry cannot be reached: ${lastLines(stderr)}` });
          return reject(new Error(`scripts/install-agents.sh failed: ${lastLines(stderr, 20)}`));
        }
        const dir = stdout.trim().split("\n").pop()!;
        const bin = join(dir, "node_modules/.bin");
        resolve({ agents: { dir, bin, path: `${bin}:${process.env.PATH ?? ""}` } });
      },
    );
  });
  return installing;
}

function lastLines(text: string, n = 3): string {
  return text.trim().split("\n").slice(-n).join(" | ");
}
