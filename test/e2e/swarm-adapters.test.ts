/**
 * SPEC.md `adapters`: walked at every run-swarm. An adapter package installed after the daemon
 * started is used by the next run without a restart; a package that fails to load fails only the
 * steps that need it, with the load report's message. Real daemon, real CLI, real packages.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { fixtureAgent } from "../core/sessions/harness.js";
import { makeSandbox } from "../core/plugin-host/sandbox.js";

const fx = useDaemonProcess({
  makeHome: makeSandbox,
  setup: async (sb) => {
    await sb.writeConfig({ acpAgents: { echo: fixtureAgent("echo-agent.mjs") } });
    return { env: { SVC_INSTALL_DIR: sb.install } };
  },
});

const cli = (args: string[]) => runCli(args, { home: fx.sandbox.home, cwd: fx.sandbox.cwd, env: fx.sandbox.env });

async function run(steps: unknown[]) {
  const file = join(fx.sandbox.cwd, "s.swarm.json");
  await writeFile(file, JSON.stringify({ schema: "svc/swarm/v1", steps }));
  const r = await cli(["run-swarm", file, "--json"]);
  return { ...r, run: JSON.parse(r.stdout).run };
}

describe("run-swarm walks config.adapters at every run", () => {
  it("a package installed after the daemon started is used by the next run, without a restart", async () => {
    const before = await run([{ id: "s", model: "m", adapter: "echo", prompt: "hi" }]);
    expect(before.run.steps.s).toMatchObject({ state: "succeeded", output: "echo: hi" });
    expect(before.run.plan.steps[0].adapter).toMatchObject({ slug: "echo", source: "config" });

    const install = await cli(["adapters", "install", await fx.sandbox.source("svc-fixture-adapter")]);
    expect(install.code, install.stderr).toBe(0);
    const after = await run([{ id: "s", model: "m", adapter: "echo", prompt: "hi" }]);
    expect(after.code, after.stderr).toBe(0);
    expect(after.run.plan.steps[0].adapter).toMatchObject({
      slug: "echo",
      source: "package",
      package: "svc-fixture-adapter",
    });
    expect(after.run.steps.s).toMatchObject({ state: "succeeded", output: "You said: hi" });
    // The same daemon process throughout: no restart.
    expect(fx.daemon.child.exitCode).toBeNull();
    expect(JSON.parse(await readFile(join(fx.sandbox.home, "runtime.json"), "utf8")).pid).toBe(fx.daemon.child.pid);
  });

  it("a package that fails to load fails only the steps that need it, with the load report's message", async () => {
    const dir = join(fx.sandbox.install, "node_modules", "svc-adapter-broken");
    await mkdir(dir, { recursive: true });
    const manifest = {
      schema: "svc/adapter/v1",
      svc: ">=0.20.0",
      plugins: [{ type: "adapter", kind: "broken", entry: "./index.js" }],
    };
    await writeFile(
      join(dir, "package.json"),
      JSON.stringify({
        name: "svc-adapter-broken",
        version: "1.0.0",
        type: "module",
        main: "./index.js",
        "svc-adapter": manifest,
      }),
    );
    await writeFile(join(dir, "index.js"), 'throw new Error("broken on purpose");\n');
    const config = JSON.parse(await readFile(join(fx.sandbox.home, "config.json"), "utf8"));
    await fx.sandbox.writeConfig({ ...config, adapters: [...(config.adapters ?? []), "svc-adapter-broken"] });

    const r = await run([
      { id: "bad", model: "m", adapter: "broken", prompt: "x" },
      { id: "after-bad", model: "m", adapter: "echo", needs: ["bad"], prompt: "x" },
      { id: "good", model: "m", adapter: "echo", prompt: "fine" },
    ]);
    expect(r.code).toBe(1);
    expect(r.run.plan.loadReport).toEqual([
      expect.objectContaining({ package: "svc-adapter-broken", phase: "import" }),
    ]);
    expect(r.run.steps.bad.state).toBe("failed");
    expect(r.run.steps.bad.error).toContain("adapter package svc-adapter-broken not loaded (import)");
    expect(r.run.steps.bad.error).toContain("broken on purpose");
    expect(r.run.steps["after-bad"]).toEqual({ state: "skipped", reason: "needs bad, which failed" });
    expect(r.run.steps.good).toMatchObject({ state: "succeeded", output: "You said: fine" });
  });
});
