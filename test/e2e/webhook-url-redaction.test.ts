/**
 * Issue 42, finding 5: a webhook URL's credentials (query values; userinfo is refused at create)
 * appear in no listing: `svc webhooks add/ls/rm`, `svc sentinel list/status`, REST
 * `GET /sentinels` and `/sentinels/:id` (which the dashboard reads), the MCP `sentinel_list` tool
 * and `events/subscribe`, nor the daemon's log. Deliveries still go to the real URL. A real
 * daemon, the real CLI, a real HTTPS receiver, the official MCP SDK client.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, until, type WebhookReceiver } from "../support/webhook-receiver.js";
import { mcpClient } from "./github-helpers.js";

const SECRET = `whsec_${Buffer.alloc(32, 42).toString("base64")}`;
const TOKEN = "cb-token-5f0c9e1d2b7a";
const OTHER = "cb-other-88e1a4";

describe("webhook URL credentials are redacted in every listing", () => {
  let rx: WebhookReceiver;
  let url: string;
  let listed: string;
  let id: string;
  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
    url = `https://127.0.0.1:${rx.port}/hooks/cb?token=${TOKEN}&team=${OTHER}&flag`;
    listed = `https://127.0.0.1:${rx.port}/hooks/cb?token=REDACTED&team=REDACTED&flag`;
  });
  afterAll(async () => {
    await rx?.close();
  });
  const fx = useDaemonProcess({ prefix: "svc-e2e-url-redaction-", config: LOOPBACK_CONFIG });
  const svc = (args: string[]) => runCli(args, { home: fx.home, env: { MY_SECRET: SECRET } });
  const clean = (text: string) => {
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(OTHER);
    return text;
  };

  it("svc webhooks add echoes the URL redacted, and delivers to the real one", async () => {
    const added = await svc(["webhooks", "add", url, "--subject", "redact:1", "--secret-env", "MY_SECRET"]);
    expect(added.code, added.stderr).toBe(0);
    expect(clean(added.stdout)).toContain(`→ ${listed} (`);
    const json = await svc(["webhooks", "add", url, "--subject", "redact:2", "--secret-env", "MY_SECRET", "--json"]);
    expect(json.code, json.stderr).toBe(0);
    const created = JSON.parse(clean(json.stdout));
    expect(created.spec.target.url).toBe(listed);
    id = created.id;

    const pushed = await svc(["sentinel", "push", "redact:2", "--type", "ci.done", "--id", "ev-redact-1"]);
    expect(pushed.code, pushed.stderr).toBe(0);
    const delivery = await until(() => rx.deliveries.find((d) => d.body.includes("ev-redact-1")), "the delivery");
    expect(delivery.path).toBe(`/hooks/cb?token=${TOKEN}&team=${OTHER}&flag`);
  });

  it("a URL with userinfo is refused at create without echoing it", async () => {
    const withUser = `https://alice:pw-${TOKEN}@127.0.0.1:${rx.port}/hooks/cb`;
    const r = await svc(["webhooks", "add", withUser, "--subject", "redact:3", "--secret-env", "MY_SECRET"]);
    expect(r.code).toBe(1);
    expect(clean(r.stderr + r.stdout)).toMatch(/must not carry credentials/);
  });

  it("the CLI's listings: webhooks ls, sentinel list, sentinel status", async () => {
    for (const args of [
      ["webhooks", "ls"],
      ["webhooks", "ls", "--json"],
      ["sentinel", "list"],
      ["sentinel", "list", "--json"],
      ["sentinel", "status", id],
      ["sentinel", "status", id, "--json"],
    ]) {
      const r = await svc(args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      clean(r.stdout + r.stderr);
    }
    const ls = JSON.parse((await svc(["webhooks", "ls", "--json"])).stdout) as {
      webhooks: Array<{ spec: { target: { url: string } } }>;
    };
    expect(ls.webhooks.map((w) => w.spec.target.url)).toEqual([listed, listed]);
  });

  it("REST GET /sentinels and /sentinels/:id (the dashboard's data)", async () => {
    const list = await fx.daemon.fetch("/sentinels");
    expect(list.status).toBe(200);
    expect(clean(await list.text())).toContain(listed);
    const one = await fx.daemon.fetch(`/sentinels/${id}`);
    expect(one.status).toBe(200);
    clean(await one.text());
    // A token-less loopback reader sees the same.
    clean(await (await fx.daemon.fetch("/sentinels", { auth: false })).text());
  });

  it("MCP: sentinel_list, and an events/subscribe to such a URL", async () => {
    const mcp = await mcpClient(fx.daemon.baseUrl, fx.daemon.token);
    try {
      const { sentinels } = (await mcp.json("sentinel_list")) as { sentinels: unknown[] };
      expect(sentinels.length).toBeGreaterThanOrEqual(2);
      expect(clean(JSON.stringify(sentinels))).toContain(listed);
    } finally {
      await mcp.close();
    }
    const client = new Client({ name: "svc-e2e-redaction", version: "0.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${fx.daemon.token}` } },
      }),
    );
    try {
      const sub = await client.request(
        {
          method: "events/subscribe",
          params: {
            name: "agentpush.event",
            arguments: { subject: "redact:*" },
            delivery: { mode: "webhook", url, secret: SECRET },
          },
        } as never,
        z.looseObject({}),
      );
      clean(JSON.stringify(sub));
      // A token-less reader lists it too, redacted.
      const mcp2 = await mcpClient(fx.daemon.baseUrl);
      try {
        const { sentinels } = (await mcp2.json("sentinel_list")) as { sentinels: unknown[] };
        expect(sentinels.length).toBeGreaterThanOrEqual(3);
        clean(JSON.stringify(sentinels));
      } finally {
        await mcp2.close();
      }
    } finally {
      await client.close();
    }
  });

  it("webhooks rm by the URL matches its listed form; the daemon's log never held the values", async () => {
    const rm = await svc(["webhooks", "rm", url, "--all"]);
    expect(rm.code, rm.stderr).toBe(0);
    expect(clean(rm.stdout)).toMatch(/removed snt_\w+ \(delivering to .*token=REDACTED/);
    clean(fx.daemon.logs());
  });
});
