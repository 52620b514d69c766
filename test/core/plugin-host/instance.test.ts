import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { DependencyContainer } from "tsyringe";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createContainer } from "../../../core/container.js";
import type { SentinelIngress, SessionUpdateSink, SvcEvent } from "../../../core/plugin-api/index.js";
import { pluginInstance } from "../../../core/plugin-host/context.js";
import { loadPlugins } from "../../../core/plugin-host/load.js";
import { pluginHostModule } from "../../../core/plugin-host/module.js";
import type { PluginRegistry } from "../../../core/plugin-host/registry.js";
import { registerValue } from "../../../core/runtime/inject.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { CLOCK, ENV, LOGGER, PLUGINS, SERVICES, SLEEP, resolve } from "../../../core/tokens.js";
import { SETUP_RETRY_AFTER_MS } from "../../../core/plugin-host/registry.js";
import { makeSandbox, type Sandbox } from "./sandbox.js";

let sb: Sandbox;
let c: DependencyContainer;
let logger: ReturnType<typeof createMemoryLogger>;
let registry: PluginRegistry;
const ingested: Array<{ provider: string; events: SvcEvent[] }> = [];

beforeEach(async () => {
  sb = await makeSandbox();
  logger = createMemoryLogger();
  c = await createContainer({ home: sb.home, env: sb.env, logger });
  registry = resolve(c, PLUGINS);
  ingested.length = 0;
  resolve(c, SERVICES).provide("sentinels", {
    ingest: async (provider: string, events: SvcEvent[]) => {
      ingested.push({ provider, events });
      return { accepted: events.length, matched: [] };
    },
  } as unknown as SentinelIngress);
});
afterEach(() => sb.cleanup());

describe("fixture plugins work through their PluginContext", () => {
  beforeEach(async () => {
    for (const name of ["svc-fixture-provider", "svc-fixture-target", "svc-fixture-adapter"])
      await sb.place("cwd", name);
    await loadPlugins(registry, {
      ids: ["svc-fixture-provider", "svc-fixture-target", "svc-fixture-adapter"],
      env: sb.env,
      cwd: sb.cwd,
      builtins: false,
    });
    expect(registry.failures).toEqual([]);
  });

  it("the provider hands events to the host's sentinels service", async () => {
    const provider = await pluginInstance(c, "provider", "fixture-ticks");
    expect(provider.defaultTypes("fixture:clock")).toEqual(["fixture.tick.fired"]);
    expect(await provider.readiness()).toMatchObject({ ready: true });
    await provider.pollNow!();
    await provider.pollNow!();
    expect(ingested.map((i) => [i.provider, i.events[0]!.id])).toEqual([
      ["fixture-ticks", "tick-1"],
      ["fixture-ticks", "tick-2"],
    ]);
    expect(await pluginInstance(c, "provider", "fixture-ticks")).toBe(provider);
  });

  it("the target validates input with the host's zod, refuses with an SvcError, and writes under its storage folder", async () => {
    const target = await pluginInstance(c, "target", "fixture-memo");
    expect(target.inputSchema.safeParse({ kind: "fixture-memo" }).success).toBe(false);
    await expect(
      target.create({ kind: "fixture-memo", label: "refuse" }, { sentinelId: "s1", principal: "loopback" }),
    ).rejects.toMatchObject({ code: "invalid_input" });
    const stored = await target.create(
      { kind: "fixture-memo", label: "memo" },
      { sentinelId: "s1", principal: "loopback" },
    );
    const sentinel = {
      id: "s1",
      status: "active",
      createdAt: 0,
      spec: { match: [], until: { kind: "never" as const }, target: { ...stored, kind: "fixture-memo" } },
    };
    expect(await target.deliver({ sentinel, event: { id: "e1", type: "x.y.z", subjects: ["x"] } })).toEqual({
      ack: "now",
    });
    const written = await readFile(join(sb.home, "plugins", "target-fixture-memo", "memo.jsonl"), "utf8");
    expect(JSON.parse(written)).toEqual({ sentinelId: "s1", eventId: "e1" });
  });

  it("the adapter starts a session the way the session runtime does: prompt reports through the sink, stop reports the exit", async () => {
    const adapter = await pluginInstance(c, "adapter", "echo");
    expect(await adapter.slugs!()).toEqual(["echo"]);
    const calls: unknown[][] = [];
    const sink: SessionUpdateSink = {
      update: (...a) => void calls.push(["update", ...a]),
      output: (...a) => void calls.push(["output", ...a]),
      quota: (...a) => void calls.push(["quota", ...a]),
      exited: (...a) => void calls.push(["exited", ...a]),
    };
    const session = await adapter.start(
      { sessionId: "ses_1", adapter: "echo", cwd: sb.cwd, options: {}, skills: [] },
      sink,
    );
    expect(session.kind).toBe("agent");
    expect(await session.prompt!("hi")).toEqual({ stopReason: "end_turn" });
    await session.stop();
    await session.stop();
    expect(calls).toEqual([
      [
        "update",
        "agent_message_chunk",
        { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "You said: hi" } },
      ],
      ["exited", { code: 0, signal: null }],
    ]);
  });

  it("an unknown kind is not_found, naming the loaded kinds", async () => {
    await expect(pluginInstance(c, "provider", "jira")).rejects.toMatchObject({
      code: "not_found",
      message: expect.stringContaining("fixture-ticks"),
    });
  });
});

describe("setup isolation", () => {
  const plugin = (setup: () => unknown) => ({
    type: "provider" as const,
    kind: "slow",
    definition: { type: "provider" as const, kind: "slow", setup } as never,
    source: { package: "pkg-slow", builtin: false, resolvedFrom: "cwd" as const, dir: "/nowhere" },
  });

  it("a setup that does not finish in time is a setup failure (timed by the injected Sleep)", async () => {
    const child = c.createChildContainer();
    registerValue(child, SLEEP, () => Promise.resolve());
    registry.add(plugin(() => new Promise(() => undefined)));
    await expect(pluginInstance(child, "provider", "slow", 50)).rejects.toMatchObject({
      code: "plugin_load_failed",
      message: expect.stringMatching(/pkg-slow.*did not finish within 50 ms/),
    });
    expect(registry.failures).toEqual([
      { package: "pkg-slow", phase: "setup", error: expect.stringContaining("did not finish within 50 ms") },
    ]);
    expect(logger.lines.some((l) => l.includes("adapter package pkg-slow failed (setup)"))).toBe(true);
  });

  it("a failed setup is not re-run on every use: recorded and logged once, retried after the backoff, then set up", async () => {
    let now = 1_000;
    const child = c.createChildContainer();
    registerValue(child, CLOCK, { now: () => now });
    let calls = 0;
    let fail = true;
    registry.add(
      plugin(() => {
        calls++;
        if (fail) throw new Error("cannot reach the vault");
        return { defaultTypes: () => [], readiness: async () => ({ ready: true }) };
      }),
    );
    const logged = () => logger.lines.filter((l) => l.includes("adapter package pkg-slow failed (setup)")).length;
    for (let i = 0; i < 5; i++)
      await expect(pluginInstance(child, "provider", "slow")).rejects.toThrow("cannot reach the vault");
    expect(calls).toBe(1);
    expect(registry.failures).toHaveLength(1);
    expect(logged()).toBe(1);

    now += SETUP_RETRY_AFTER_MS - 1;
    await expect(pluginInstance(child, "provider", "slow")).rejects.toThrow("cannot reach the vault");
    expect(calls).toBe(1);
    now += 1;
    await expect(pluginInstance(child, "provider", "slow")).rejects.toThrow("cannot reach the vault");
    expect(calls).toBe(2);
    expect(registry.failures).toHaveLength(1);
    expect(logged()).toBe(1);

    now += SETUP_RETRY_AFTER_MS;
    fail = false;
    const instance = await pluginInstance(child, "provider", "slow");
    expect(await pluginInstance(child, "provider", "slow")).toBe(instance);
    expect(calls).toBe(3);
  });

  it("an adapter whose setup returns no start(spec, sink) is a setup failure naming the contract", async () => {
    registry.add({
      type: "adapter",
      kind: "made-up",
      definition: {
        type: "adapter",
        kind: "made-up",
        setup: () => ({ slugs: () => ["made-up"], run: async () => "hi" }),
      } as never,
      source: { package: "pkg-made-up", builtin: false, resolvedFrom: "cwd", dir: "/nowhere" },
    });
    await expect(pluginInstance(c, "adapter", "made-up")).rejects.toMatchObject({
      code: "plugin_load_failed",
      message: expect.stringContaining("returned no start(spec, sink) function"),
    });
    expect(registry.failures).toEqual([
      { package: "pkg-made-up", phase: "setup", error: expect.stringContaining("AdapterInstance") },
    ]);
  });
});

describe("the daemon module", () => {
  it("loads built-ins, then config adapters, logging one warning per failed package", async () => {
    await sb.place("cwd", "svc-fixture-provider");
    await sb.place("install", "svc-fixture-throws");
    await sb.writeConfig({ adapters: ["svc-fixture-throws", "svc-fixture-provider", "svc-fixture-missing"] });
    const d = await createContainer({ home: sb.home, env: sb.env, logger });
    const cwd = process.cwd();
    process.chdir(sb.cwd);
    try {
      await pluginHostModule.start(d);
    } finally {
      process.chdir(cwd);
    }
    const reg = resolve(d, PLUGINS);
    expect(reg.get("provider", "fixture-ticks")!.source.resolvedFrom).toBe("cwd");
    const thirdParty = reg.failures.filter((f) => !f.package.startsWith("svc ("));
    expect(thirdParty.map((f) => [f.package, f.phase])).toEqual([
      ["svc-fixture-throws", "import"],
      ["svc-fixture-missing", "resolve"],
    ]);
    const warns = logger.lines.map((l) => JSON.parse(l)).filter((l) => l.level === "warn");
    expect(warns.length).toBe(reg.failures.length);
    expect(resolve(d, ENV)).toBe(sb.env);
    expect(resolve(d, LOGGER)).toBe(logger);
  });
});
