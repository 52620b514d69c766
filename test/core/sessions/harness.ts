import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { DependencyContainer } from "tsyringe";
import { createContainer } from "../../../core/container.js";
import { FakeClock } from "../../../core/runtime/clock.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { registerClass, registerValue } from "../../../core/runtime/inject.js";
import { registryAdapterLookup, SESSION_ADAPTERS } from "../../../core/sessions/adapter-lookup.js";
import { SessionRuntime, SESSIONS } from "../../../core/sessions/runtime.js";
import { DAEMON_EVENTS, PLUGINS, resolve } from "../../../core/tokens.js";
import type { AnyPlugin } from "../../../core/plugin-api/index.js";
import acpPlugin from "../../../plugins/acp/index.js";
import terminalPlugin from "../../../plugins/terminal-presets/index.js";
import { FIXTURES, REPO_ROOT } from "../../support/paths.js";
import { makeTempHome } from "../../support/cli.js";
import type { StampedEvent } from "../../../core/daemon/event-bus.js";

export const AGENTS = join(FIXTURES, "acp-agents");

/** An acpAgents entry that runs a fixture agent with this node. */
export function fixtureAgent(file: string, extra: Record<string, unknown> = {}) {
  return { bin: process.execPath, bin_args: [join(AGENTS, file)], ...extra };
}

export const FIXTURE_AGENTS = {
  echo: fixtureAgent("echo-agent.mjs", { name: "Echo fixture" }),
  slow: fixtureAgent("slow-agent.mjs", { env: { SLOW_AGENT_TICKS: "15", SLOW_AGENT_INTERVAL_MS: "60" } }),
  hang: fixtureAgent("hang-agent.mjs"),
  crash: fixtureAgent("crash-agent.mjs"),
};

export interface Harness {
  home: string;
  c: DependencyContainer;
  runtime: SessionRuntime;
  clock: FakeClock;
  events: StampedEvent[];
  cleanup(): Promise<void>;
}

/** A container with the session runtime over a temp home, the built-in adapters loaded and a fake clock. */
export async function makeHarness(
  config: Record<string, unknown> = {},
  extraPlugins: Array<{ plugin: AnyPlugin; builtin: boolean }> = [],
): Promise<Harness> {
  const { home, cleanup } = await makeTempHome("svc-sessions-");
  await writeFile(join(home, "config.json"), JSON.stringify({ acpAgents: FIXTURE_AGENTS, ...config }));
  const clock = new FakeClock(Date.UTC(2026, 10, 21, 12));
  const c = await createContainer({
    home,
    env: { ...process.env, SVC_HOME: home },
    clock,
    logger: createMemoryLogger(),
  });
  const registry = resolve(c, PLUGINS);
  const source = { package: "svc", builtin: true, resolvedFrom: "builtin" as const, dir: REPO_ROOT };
  for (const p of [acpPlugin, terminalPlugin]) registry.add({ type: "adapter", kind: p.kind, definition: p, source });
  for (const { plugin, builtin } of extraPlugins) {
    registry.add({
      type: plugin.type,
      kind: plugin.kind,
      definition: plugin,
      source: {
        ...source,
        builtin,
        package: builtin ? "svc" : `@svc/adapter-${plugin.kind}`,
        resolvedFrom: builtin ? "builtin" : "cwd",
      },
    });
  }
  registerValue(c, SESSION_ADAPTERS, registryAdapterLookup(c));
  registerClass(c, SESSIONS, SessionRuntime);
  const runtime = resolve(c, SESSIONS);
  const events: StampedEvent[] = [];
  resolve(c, DAEMON_EVENTS).subscribe((e) => events.push(e));
  return {
    home,
    c,
    runtime,
    clock,
    events,
    cleanup: async () => {
      await runtime.stopAll();
      await cleanup();
    },
  };
}

/**
 * Polls `cond` (real time, for real child processes) until it holds. The deadline guards against
 * a hang and names what was awaited; it is no speed check (a busy machine runs ~8x slower), so it
 * stays well above what anything takes.
 */
export async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
