import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, realpath, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DependencyContainer } from "tsyringe";
import { createContainer } from "../../../core/container.js";
import { FakeClock } from "../../../core/runtime/clock.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { registerClass, registerValue } from "../../../core/runtime/inject.js";
import { registryAdapterLookup, SESSION_ADAPTERS } from "../../../core/sessions/adapter-lookup.js";
import { SessionRuntime, SESSIONS } from "../../../core/sessions/runtime.js";
import { CONFIG, PLUGINS, resolve } from "../../../core/tokens.js";
import type { LoadProbe } from "../../../core/workspaces/provision-queue.js";
import acpPlugin from "../../../plugins/acp/index.js";
import terminalPlugin from "../../../plugins/terminal-presets/index.js";
import { REPO_ROOT } from "../../support/paths.js";
import { FIXTURE_AGENTS, fixtureAgent } from "../sessions/harness.js";

export const AGENTS = { ...FIXTURE_AGENTS, shell: fixtureAgent("shell-agent.mjs") };

export function sh(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
    },
  });
}

/** A temp dir (realpath: macOS /tmp is a symlink) holding a git repository `name` with one commit. */
export async function makeRepo(
  parent: string,
  name = "app",
  files: Record<string, string> = { "README.md": "hello\n" },
): Promise<string> {
  const repo = join(parent, name);
  await mkdir(repo, { recursive: true });
  sh(repo, "init", "-q", "-b", "main");
  for (const [f, text] of Object.entries(files)) {
    await mkdir(join(repo, f, ".."), { recursive: true });
    await writeFile(join(repo, f), text);
  }
  sh(repo, "add", "-A");
  sh(repo, "commit", "-q", "-m", "first");
  return repo;
}

export async function tempDir(prefix = "svc-ws-"): Promise<string> {
  return realpath(await mkdtemp(join(tmpdir(), prefix)));
}

export class FakeLoad implements LoadProbe {
  value = 0;
  coreCount = 2;
  load1(): number {
    return this.value;
  }
  cores(): number {
    return this.coreCount;
  }
}

export interface WsHarness {
  home: string;
  c: DependencyContainer;
  runtime: SessionRuntime;
  load: FakeLoad;
  /** Rewrites config.json and reloads it (what the file watcher does in the daemon). */
  setConfig(config: Record<string, unknown>): Promise<void>;
  cleanup(): Promise<void>;
}

export async function makeWsHarness(
  config: Record<string, unknown> = {},
  env: Record<string, string> = {},
): Promise<WsHarness> {
  const home = await tempDir("svc-ws-home-");
  const write = (cfg: Record<string, unknown>) =>
    writeFile(join(home, "config.json"), JSON.stringify({ acpAgents: AGENTS, ...cfg }));
  await write(config);
  const load = new FakeLoad();
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SVC_")));
  const c = await createContainer({
    home,
    env: { ...base, SVC_HOME: home, ...env },
    clock: new FakeClock(Date.UTC(2026, 10, 24, 12)),
    logger: createMemoryLogger(),
    loadProbe: load,
  });
  const registry = resolve(c, PLUGINS);
  const source = { package: "svc", builtin: true, resolvedFrom: "builtin" as const, dir: REPO_ROOT };
  for (const p of [acpPlugin, terminalPlugin]) registry.add({ type: "adapter", kind: p.kind, definition: p, source });
  registerValue(c, SESSION_ADAPTERS, registryAdapterLookup(c));
  registerClass(c, SESSIONS, SessionRuntime);
  const runtime = resolve(c, SESSIONS);
  return {
    home,
    c,
    runtime,
    load,
    setConfig: async (cfg) => {
      await write(cfg);
      const r = await resolve(c, CONFIG).reload();
      if (!r.ok) throw r.error;
    },
    cleanup: async () => {
      await runtime.stopAll();
      const { rm } = await import("node:fs/promises");
      await rm(home, { recursive: true, force: true });
    },
  };
}
