/**
 * Issue 13: a plugin that fails to set up answers `plugin_load_failed` naming the package, the
 * phase and the fix, on every surface that needs it (REST, MCP, CLI), not a bare `500 internal`;
 * so does a plugin whose package failed to load (import, shape), not `unknown provider`.
 */
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runCli, useDaemonProcess } from "../../support/cli.js";
import { makeSandbox } from "./sandbox.js";

/** The MCP tool sentinel_watch and the CLI verb sentinel watch, with `provider`: both refused with `message`. */
async function expectMcpAndCli(
  fx: { daemon: { baseUrl: string }; home: string; sandbox: { install: string } },
  provider: string,
  message: RegExp,
): Promise<void> {
  const client = new Client({ name: "t", version: "0" });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl)));
  const out = await client.callTool({
    name: "sentinel_watch",
    arguments: { subject: "x:1", provider, sessionId: "ses_x" },
  });
  await client.close();
  expect(out.isError).toBe(true);
  const err = JSON.parse((out.content as Array<{ text: string }>)[0]!.text).error;
  expect(err.code).toBe("plugin_load_failed");
  expect(err.message).toMatch(message);
  const cli = await runCli(["sentinel", "watch", "x:1", "--provider", provider, "--session", "ses_x"], {
    home: fx.home,
    env: { SVC_INSTALL_DIR: fx.sandbox.install },
  });
  expect(cli.code).toBe(1);
  expect(cli.stderr).toMatch(message);
}

describe("a provider whose setup throws", () => {
  const fx = useDaemonProcess({
    makeHome: makeSandbox,
    setup: async (sb) => {
      await sb.place("install", "svc-fixture-setup-throws");
      await sb.writeConfig({ adapters: ["svc-fixture-setup-throws"] });
      return { env: { SVC_INSTALL_DIR: sb.install } };
    },
  });
  const spec = {
    match: [{ subject: "x:1" }],
    until: { kind: "never" },
    provider: "broken-setup",
    target: { kind: "session", sessionId: "ses_x" },
  };
  const message =
    /provider plugin "broken-setup" from package svc-fixture-setup-throws failed to set up \(phase setup\): BROKEN_API_KEY is not set; .*svc adapters rm svc-fixture-setup-throws/;

  it("REST: POST /sentinels with it is plugin_load_failed, naming the package, phase and fix", async () => {
    const res = await fx.daemon.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(spec),
    });
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect([res.status, body.error.code]).toEqual([500, "plugin_load_failed"]);
    expect(body.error.message).toMatch(message);
  });

  it("MCP and CLI answer the same", () => expectMcpAndCli(fx, "broken-setup", message));
});

describe("plugins whose package failed to load (import, shape)", () => {
  const fx = useDaemonProcess({
    makeHome: makeSandbox,
    setup: async (sb) => {
      await sb.place("install", "svc-fixture-throws");
      await sb.place("install", "svc-fixture-wrong-shape");
      await sb.writeConfig({ adapters: ["svc-fixture-throws", "svc-fixture-wrong-shape"] });
      return { env: { SVC_INSTALL_DIR: sb.install } };
    },
  });
  const importFailed =
    /provider plugin "fixture-throws" from package svc-fixture-throws failed to load \(phase import\): .*fixture entry exploded at import.*svc adapters rm svc-fixture-throws/;
  const post = async (path: string, body: unknown) => {
    const res = await fx.daemon.fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, error: ((await res.json()) as { error: { code: string; message: string } }).error };
  };

  it("REST: a sentinel with the provider, or with the target, is plugin_load_failed naming package, phase and fix", async () => {
    const provider = await post("/sentinels", {
      match: [{ subject: "x:1" }],
      until: { kind: "never" },
      provider: "fixture-throws",
      target: { kind: "session", sessionId: "ses_x" },
    });
    expect([provider.status, provider.error.code]).toEqual([500, "plugin_load_failed"]);
    expect(provider.error.message).toMatch(importFailed);
    const target = await post("/sentinels", {
      match: [{ subject: "x:1" }],
      until: { kind: "never" },
      target: { kind: "fixture-shapeless" },
    });
    expect(target.error.code).toBe("plugin_load_failed");
    expect(target.error.message).toMatch(
      /target plugin "fixture-shapeless" from package svc-fixture-wrong-shape failed to load \(phase shape\): .*svc adapters rm svc-fixture-wrong-shape/,
    );
  });

  it("REST: a route under the provider's prefix names the package too", async () => {
    const r = await post("/providers/fixture-throws/events", {});
    expect(r.error.code).toBe("plugin_load_failed");
    expect(r.error.message).toMatch(importFailed);
  });

  it("MCP and CLI answer the same", () => expectMcpAndCli(fx, "fixture-throws", importFailed));
});
