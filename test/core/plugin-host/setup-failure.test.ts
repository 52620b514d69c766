/**
 * Issue 13: a plugin that fails to set up answers `plugin_load_failed` naming the package, the
 * phase and the fix, on every surface that needs it (REST, MCP, CLI), not a bare `500 internal`.
 */
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runCli, useDaemonProcess } from "../../support/cli.js";
import { makeSandbox } from "./sandbox.js";

describe("a provider whose setup throws", () => {
  const fx = useDaemonProcess({
    makeHome: makeSandbox,
    setup: async (sb) => {
      await sb.place("install", "svc-fixture-setup-throws");
      await sb.writeConfig({ adapters: ["svc-fixture-setup-throws"] });
      return { env: { SVC_INSTALL_DIR: sb.install } };
    },
  });
  const spec = { match: [{ subject: "x:1" }], until: { kind: "never" }, provider: "broken-setup", target: { kind: "session", sessionId: "ses_x" } };
  const message = /provider plugin "broken-setup" from package svc-fixture-setup-throws failed to set up \(phase setup\): BROKEN_API_KEY is not set; .*svc adapters rm svc-fixture-setup-throws/;

  it("REST: POST /sentinels with it is plugin_load_failed, naming the package, phase and fix", async () => {
    const res = await fx.daemon.fetch("/sentinels", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(spec) });
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect([res.status, body.error.code]).toEqual([500, "plugin_load_failed"]);
    expect(body.error.message).toMatch(message);
  });

  it("MCP and CLI answer the same", async () => {
    const client = new Client({ name: "t", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl)));
    const out = await client.callTool({ name: "sentinel_watch", arguments: { subject: "x:1", provider: "broken-setup", sessionId: "ses_x" } });
    await client.close();
    expect(out.isError).toBe(true);
    const err = JSON.parse((out.content as Array<{ text: string }>)[0]!.text).error;
    expect(err.code).toBe("plugin_load_failed");
    expect(err.message).toMatch(message);
    const cli = await runCli(["sentinel", "watch", "x:1", "--provider", "broken-setup", "--session", "ses_x"], { home: fx.home, env: { SVC_INSTALL_DIR: fx.sandbox.install } });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(message);
  });
});
