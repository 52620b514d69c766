import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { configModule } from "../../../core/config/module.js";
import { startDaemon, type RunningDaemon } from "../../../core/daemon/daemon.js";
import { DAEMON_MODULES } from "../../../core/daemon/modules.js";
import { mcpModule } from "../../../core/daemon/mcp-module.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { writeFileDurable } from "../../../core/storage/atomic-write.js";
import { CONFIG, resolve } from "../../../core/tokens.js";
import { makeTempHome } from "../../support/cli.js";

async function until<T>(probe: () => T | undefined | false, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

type ToolOut = { isError?: boolean; structuredContent?: any; content: Array<{ text: string }> };

describe("the config daemon module", () => {
  let home: Awaited<ReturnType<typeof makeTempHome>>;
  let daemon: RunningDaemon;
  let client: Client;
  const logger = createMemoryLogger();
  let file: string;
  const call = (name: string, args: Record<string, unknown>) =>
    client.callTool({ name, arguments: args }) as Promise<ToolOut>;

  beforeAll(async () => {
    home = await makeTempHome();
    file = join(home.home, "config.json");
    await writeFile(
      file,
      JSON.stringify({
        daemon: { authToken: "stable-secret-token-000" },
        spawn: { attach: "on-request" },
        keepMe: { x: 1 },
      }),
    );
    daemon = await startDaemon({
      home: home.home,
      env: { SVC_SPAWN_DEDUPE: "on-request" },
      flags: { port: 0 },
      logger,
      modules: [configModule, mcpModule],
    });
    client = new Client({ name: "config-test", version: "0.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", `http://127.0.0.1:${daemon.info.port}`)));
  });
  afterAll(async () => {
    await client?.close();
    await daemon?.stop();
    await home?.cleanup();
  });

  it("is the first daemon module", () => {
    expect(DAEMON_MODULES[0]).toBe(configModule);
  });

  it("config_get returns the value and its source, secrets redacted", async () => {
    expect((await call("config_get", { key: "spawn.attach" })).structuredContent).toEqual({
      key: "spawn.attach",
      value: "on-request",
      source: "config",
    });
    expect((await call("config_get", { key: "spawn.dedupe" })).structuredContent).toMatchObject({
      value: "on-request",
      source: "env SVC_SPAWN_DEDUPE",
    });
    expect((await call("config_get", { key: "daemon.port" })).structuredContent).toMatchObject({
      value: 0,
      source: "flag --port",
    });
    const token = await call("config_get", { key: "daemon.authToken" });
    expect(token.structuredContent.value).toBe("[redacted]");
    const section = await call("config_get", { key: "daemon" });
    expect(JSON.stringify(section)).not.toContain("stable-secret-token-000");
    expect((await call("config_get", { key: "" })).isError).toBe(true);
  });

  it("model_roles is read-only and lists the resolved table with sources", async () => {
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === "model_roles")!.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === "config_set")!.annotations?.readOnlyHint).toBe(false);
    const out = await call("model_roles", {});
    expect(Object.keys(out.structuredContent.roles)).toEqual(
      expect.arrayContaining(["review.small", "review.large", "review.pr", "judge.session"]),
    );
    expect(out.structuredContent.roles["review.pr"].source).toBe("default");
  });

  it("config_set writes through the CLI's rules, keeps unknown keys, and applies at once", async () => {
    const out = await call("config_set", { key: "models.review.pr", value: "house-model" });
    expect(out.isError).toBeFalsy();
    expect(out.structuredContent).toMatchObject({
      changed: true,
      applied: true,
      warnings: [expect.stringMatching(/not in the model catalog/)],
    });
    expect(JSON.parse(await readFile(file, "utf8")).keepMe).toEqual({ x: 1 });
    expect((await call("model_roles", {})).structuredContent.roles["review.pr"]).toEqual({
      model: "house-model",
      source: "config",
    });
  });

  it("config_set refuses extJudge.apiKey and invalid values, leaving the file unchanged", async () => {
    const before = await readFile(file, "utf8");
    // A loopback caller without the token may not touch extJudge (it decides where the judge key goes).
    const anon = await call("config_set", { key: "extJudge.apiKey", value: "sk-never-logged" });
    expect(anon.isError).toBe(true);
    expect(anon.content[0]!.text).toMatch(/bearer token/);
    expect(anon.content[0]!.text).not.toContain("sk-never-logged");
    // With the token, the key is still refused: it is never written through a tool.
    const owner = new Client({ name: "config-test-owner", version: "0.0.0" });
    await owner.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", `http://127.0.0.1:${daemon.info.port}`), {
        requestInit: { headers: { authorization: "Bearer stable-secret-token-000" } },
      }),
    );
    const key = (await owner.callTool({
      name: "config_set",
      arguments: { key: "extJudge.apiKey", value: "sk-never-logged" },
    })) as ToolOut;
    await owner.close();
    expect(key.isError).toBe(true);
    expect(key.content[0]!.text).toMatch(/hand-edit/i);
    expect(key.content[0]!.text).not.toContain("sk-never-logged");
    const bad = await call("config_set", { key: "spawn.attach", value: "sometimes" });
    expect(bad.isError).toBe(true);
    expect(JSON.parse(bad.content[0]!.text).error.code).toBe("config_invalid");
    expect(await readFile(file, "utf8")).toBe(before);
    expect((await call("config_set", { key: "extJudge.model", value: "ext-latest" })).isError).toBeFalsy();
  });

  it("reloads when the file changes; a bad file keeps the last good configuration and says so", async () => {
    const config = resolve(daemon.container, CONFIG);
    const current = JSON.parse(await readFile(file, "utf8"));
    await writeFileDurable(
      file,
      JSON.stringify({ ...current, spawn: { attach: "always" }, sessions: { attentionDelaySec: 7 } }),
    );
    await until(() => config.current().effective.sessions.attentionDelaySec === 7, "the reload");
    await writeFileDurable(file, "{ broken");
    await until(() => logger.lines.find((l) => l.includes("keeps its last good configuration")), "the warning");
    expect(config.current().effective.sessions.attentionDelaySec).toBe(7);
    expect((await call("config_get", { key: "sessions.attentionDelaySec" })).structuredContent.value).toBe(7);
    await writeFileDurable(file, JSON.stringify({ sessions: { attentionDelaySec: 8 } }));
    await until(() => config.current().effective.sessions.attentionDelaySec === 8, "recovery");
    expect(logger.lines.join("\n")).not.toContain("stable-secret-token-000");
  });
});
