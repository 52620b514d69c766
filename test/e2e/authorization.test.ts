/**
 * Issue 12: one authorization rule per operation. With daemon.authToken set, a loopback caller
 * without a token (on a multi-user machine, any local account) could do through /mcp what the
 * REST routes refused: replace the auth token, open the SSRF gate, replace a provider secret,
 * remove someone's webhook sentinel. Each is now refused on every surface, the same way.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { useDaemonProcess } from "../support/cli.js";
import { rawRequest } from "../support/http.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { OPERATIONS } from "../../core/daemon/authorization.js";

const STABLE = "authz-stable-token-5c0ffee";
const SECRET = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;

async function mcp(base: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "svc-authz-test", version: "0.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", base), { requestInit: { headers } }));
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const out = await client.callTool({ name, arguments: args });
  return {
    isError: out.isError === true,
    text: (out.content as Array<{ text: string }>)[0]?.text ?? "",
    structured: out.structuredContent as any,
  };
}

describe("authorization is the same on every surface (daemon.authToken set)", () => {
  let rx: WebhookReceiver;
  let webhookId: string;
  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
  });
  afterAll(async () => rx?.close());
  // The llm-endpoint on too, so that its tools are among those checked.
  const fx = useDaemonProcess({
    prefix: "svc-e2e-authz-",
    config: {
      ...LOOPBACK_CONFIG,
      daemon: { authToken: STABLE },
      features: { llmEndpoint: true },
      llmEndpoint: { port: 0 },
    },
  });

  beforeAll(async () => {
    const res = await fx.daemon.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        match: [{ subject: "ci:x" }],
        until: { kind: "never" },
        provider: "agentpush",
        target: { kind: "webhook", url: rx.url, secret: SECRET },
      }),
    });
    expect(res.status).toBe(201);
    webhookId = ((await res.json()) as { id: string }).id;
  });

  it("config_set of a reach-widening key needs the token through /mcp; config.json is untouched", async () => {
    const before = await readFile(join(fx.home, "config.json"), "utf8");
    const anon = await mcp(fx.daemon.baseUrl);
    for (const [key, value] of [
      ["daemon.authToken", "attacker-token"],
      ["webhooks.allowSubnets", ["0.0.0.0/0", "::/0"]],
      ["daemon.bind", "0.0.0.0"],
      ["acpAgents.evil", { bin: "sh" }],
      ["daemon", { port: 1 }],
      ["defaults.adapters.gemini.auth", { apiKey: "k" }],
      ["terminalPresets.evil", { argv: ["sh", "-c", "id"] }],
      ["adapters", ["evil-adapter-package"]],
      ["tunnel.host", "wss://tunnel.example"],
      ["pairing.rendezvous", "wss://broker.example"],
    ] as const) {
      const r = await call(anon, "config_set", { key, value });
      expect(r.isError, key).toBe(true);
      expect(r.text, key).toMatch(/bearer token/);
    }
    // Removing a key widens reach too: without daemon.authToken a non-loopback caller needs no token.
    for (const key of ["daemon.authToken", "webhooks", "daemon"]) {
      const r = await call(anon, "config_set", { key, unset: true });
      expect(r.isError, `unset ${key}`).toBe(true);
      expect(r.text, `unset ${key}`).toMatch(/bearer token/);
    }
    expect(await readFile(join(fx.home, "config.json"), "utf8")).toBe(before);
    // The owner's token still works afterwards, and a key that widens nothing needs none.
    expect(
      (
        await rawRequest(fx.daemon.port, {
          method: "POST",
          path: "/heartbeat/tick",
          headers: { "x-forwarded-for": "203.0.113.1", authorization: `Bearer ${STABLE}` },
        })
      ).status,
    ).toBe(200);
    const ok = await call(anon, "config_set", { key: "models.review.small", value: "claude-haiku-4-5" });
    expect(ok.isError).toBe(false);
    await anon.close();
    // With the token, the same reach-widening write goes through.
    const owner = await mcp(fx.daemon.baseUrl, { authorization: `Bearer ${STABLE}` });
    expect(
      (await call(owner, "config_set", { key: "daemon.allowedOrigins", value: ["http://app.example"] })).isError,
    ).toBe(false);
    await owner.close();
  });

  it("setup_sentinel_provider needs the token: a loopback caller cannot replace the GitHub signing secret", async () => {
    const anon = await mcp(fx.daemon.baseUrl);
    const r = await call(anon, "setup_sentinel_provider", {
      provider: "webhook",
      settings: { secret: "attacker-secret-0123456789" },
    });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/bearer token/);
    await anon.close();
    const creds = await readFile(join(fx.home, "credentials.json"), "utf8").catch(() => "");
    expect(creds).not.toContain("attacker-secret");
  });

  it("removing a webhook sentinel needs the token on REST and MCP alike; a session sentinel does not", async () => {
    const anon = await mcp(fx.daemon.baseUrl);
    const viaMcp = await call(anon, "sentinel_unwatch", { id: webhookId });
    expect(viaMcp.isError).toBe(true);
    expect(viaMcp.text).toMatch(/sentinel\.remove-outbound.*bearer token/);
    const viaRest = await fx.daemon.fetch(`/sentinels/${webhookId}`, { method: "DELETE", auth: false });
    expect(viaRest.status).toBe(401);
    expect((await fx.daemon.fetch(`/sentinels/${webhookId}`)).status).toBe(200);
    // Everyday operations answer the same on both surfaces without a token.
    expect((await fx.daemon.fetch("/sentinels", { auth: false })).status).toBe(200);
    expect((await call(anon, "sentinel_list", {})).isError).toBe(false);
    await anon.close();
  });

  it("creating a webhook sentinel needs the token even from loopback", async () => {
    const res = await fx.daemon.fetch("/sentinels", {
      method: "POST",
      auth: false,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        match: [{ subject: "ci:y" }],
        until: { kind: "never" },
        provider: "agentpush",
        target: { kind: "webhook", url: rx.url, secret: SECRET },
      }),
    });
    expect(res.status).toBe(401);
  });

  it("every MCP tool the daemon serves is in the operations table, and its token-level tools refuse a loopback caller", async () => {
    const anon = await mcp(fx.daemon.baseUrl);
    const served = (await anon.listTools()).tools.map((t) => t.name);
    const declared = new Map<string, string>();
    for (const [id, op] of Object.entries(OPERATIONS)) for (const m of op.mcp) declared.set(m.split(" (")[0]!, id);
    expect(
      served.filter((name) => !declared.has(name)),
      "tools missing from core/daemon/authorization.ts",
    ).toEqual([]);
    const unconditional = Object.values(OPERATIONS)
      .filter((op) => op.requires === "token")
      .flatMap((op) => op.mcp.filter((m) => !m.includes("(")));
    for (const name of unconditional) {
      const args: Record<string, Record<string, unknown>> = {
        sentinel_replay: { sentinelId: webhookId },
        sentinel_resume: { sentinelId: webhookId },
        setup_sentinel_provider: { provider: "webhook", settings: {} },
      };
      const r = await call(anon, name, args[name] ?? {});
      expect(r.isError, name).toBe(true);
      expect(r.text, name).toMatch(/bearer token/);
    }
    await anon.close();
  });

  it.each([
    ["Forwarded", { forwarded: "for=203.0.113.7;proto=https" }],
    ["X-Real-IP", { "x-real-ip": "203.0.113.7" }],
    ["X-Forwarded-For", { "x-forwarded-for": "203.0.113.7" }],
  ])("a request with %s is a proxied caller, not loopback", async (_name, headers) => {
    expect((await rawRequest(fx.daemon.port, { method: "POST", path: "/heartbeat/tick", headers })).status).toBe(401);
    expect((await rawRequest(fx.daemon.port, { method: "POST", path: "/heartbeat/tick" })).status).toBe(200);
  });
});
