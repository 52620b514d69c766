/**
 * A `role:` cycle hand-written into config.json (`config set` refuses one, an editor does not)
 * breaks only the roles that reach it: `config get models`, `model_roles` and the daemon keep
 * working and name the chain; a swarm step using another role still runs.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { fixtureAgent } from "../core/sessions/harness.js";

const CHAIN = "role:a -> role:b -> role:a";

const fx = useDaemonProcess({
  prefix: "svc-e2e-role-cycle-",
  config: {
    acpAgents: { echo: fixtureAgent("echo-agent.mjs", { models: { allowed: ["fx-echo"] } }) },
    models: { a: "role:b", b: "role:a", via: "role:a", ok: "fx-echo" },
  },
  setup: async ({ home }) => {
    await mkdir(join(home, "work"));
  },
});

const cli = (args: string[]) => runCli(args, { home: fx.home, cwd: join(fx.home, "work") });

describe("a role: cycle hand-written into config.json", () => {
  it("config get models lists the other roles and names the broken ones; config get models.<role> works for the others", async () => {
    const all = await cli(["config", "get", "models", "--source", "--json"]);
    expect(all.code, all.stderr).toBe(0);
    const found = JSON.parse(all.stdout);
    expect(found.value).toMatchObject({ ok: "fx-echo", "review.small": "claude-haiku-4-5" });
    expect(found.value.a).toBeUndefined();
    expect(found.problems.a).toContain(`cycle: ${CHAIN}`);
    expect(found.problems.via).toContain("cycle: role:via -> role:a -> role:b -> role:a");
    expect(all.stderr).toContain(`models.a does not resolve: model roles refer to each other in a cycle: ${CHAIN}`);

    const ok = await cli(["config", "get", "models.ok"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout.trim()).toBe("fx-echo");
    const bad = await cli(["config", "get", "models.a"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`models.a: model roles refer to each other in a cycle: ${CHAIN}`);
  });

  it("model_roles and config_get over MCP keep working, naming the chain", async () => {
    const client = new Client({ name: "svc-test", version: "0.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl)));
    try {
      const roles = await client.callTool({ name: "model_roles", arguments: {} });
      expect(roles.isError).toBeFalsy();
      const out = roles.structuredContent as {
        roles: Record<string, { model: string; source: string }>;
        problems: Record<string, string>;
      };
      expect(out.roles.ok).toEqual({ model: "fx-echo", source: "config" });
      expect(out.roles["review.pr"]).toMatchObject({ source: "default" });
      expect(Object.keys(out.problems).sort()).toEqual(["a", "b", "via"]);
      expect(out.problems.b).toContain("cycle: role:b -> role:a -> role:b");
      const get = await client.callTool({ name: "config_get", arguments: { key: "models.ok" } });
      expect(get.structuredContent).toMatchObject({ value: "fx-echo", source: "config" });
    } finally {
      await client.close();
    }
  });

  it("the daemon runs a swarm on: a step using another role succeeds, one reaching the cycle fails naming it", async () => {
    const file = join(fx.home, "work", "cycle.swarm.json");
    await writeFile(
      file,
      JSON.stringify({
        schema: "svc/swarm/v1",
        steps: [
          { id: "good", model: "role:ok", prompt: "hi" },
          { id: "bad", model: "role:via", adapter: "echo", prompt: "hi" },
        ],
      }),
    );
    const r = await cli(["run-swarm", file, "--json"]);
    expect(r.code).toBe(1);
    const { run } = JSON.parse(r.stdout);
    expect(run.steps.good).toMatchObject({ state: "succeeded", output: "echo: hi" });
    expect(run.steps.bad.state).toBe("failed");
    expect(run.steps.bad.error).toContain("cycle: role:via -> role:a -> role:b -> role:a");
  });
});
