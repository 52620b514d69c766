/**
 * The MCP events extension end to end (issue 27's "Done when"): a real daemon, the official MCP
 * TypeScript SDK clients (custom requests for the events methods), a real HTTPS receiver that
 * verifies every delivery with `standardwebhooks` and checks `X-MCP-Subscription-Id`, signed GitHub
 * webhooks and agentpush events, a refresh rotating the secret, poll cursors, unsubscribe, and a
 * no-expiry subscription delivering after a daemon restart.
 */
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { signBody } from "../../plugins/webhook-provider/signature.js";
import { useDaemonProcess } from "../support/cli.js";
import { fakeGhEnv, mcpClient } from "./github-helpers.js";
import {
  LOOPBACK_CONFIG,
  startWebhookReceiver,
  type Delivery,
  type WebhookReceiver,
} from "../support/webhook-receiver.js";

const GH_SECRET = "e2e-mcp-events-gh-secret-8d2f";
const secret = (fill: number) => `whsec_${Buffer.alloc(32, fill).toString("base64")}`;
const payload = (name: string) =>
  readFileSync(new URL(`../plugins/github-common/payloads/${name}.json`, import.meta.url), "utf8");
const anyResult = z.looseObject({});

async function until<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in time`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("MCP events: subscribe by webhook, refresh, poll, unsubscribe, restart (real daemon, real SDK clients)", () => {
  let rx: WebhookReceiver;
  let gh: Awaited<ReturnType<typeof fakeGhEnv>>;
  const fx = useDaemonProcess({
    prefix: "svc-e2e-mcp-events-",
    config: LOOPBACK_CONFIG,
    setup: async () => {
      gh = await fakeGhEnv("pr-42");
      return { env: gh.env };
    },
  });
  beforeAll(async () => {
    rx = await startWebhookReceiver([secret(1)]);
  });
  afterAll(async () => {
    await rx?.close();
  });

  /** A 2025-era client (the v1 SDK), authenticated with the daemon's per-boot token. */
  const legacyClient = async () => {
    const client = new Client({ name: "svc-e2e-events", version: "0.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${fx.daemon.token}` } },
      }),
    );
    return client;
  };
  const call = (client: Client, method: string, params: Record<string, unknown>) =>
    client.request({ method, params } as never, anyResult) as Promise<Record<string, any>>;
  const deliverGithub = (body: string, event: string, delivery: string) =>
    fetch(`${fx.daemon.baseUrl}/providers/webhook/github`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": event,
        "x-github-delivery": delivery,
        "x-hub-signature-256": signBody(body, GH_SECRET),
      },
      body,
    });
  const push = async (events: unknown[]) => {
    const res = await fx.daemon.fetch("/providers/agentpush/events", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(events),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { matched: Array<{ sentinelId: string; eventId: string; outcome: string }> };
  };
  const ciEvent = (id: string) => ({
    id,
    type: "ci.build.finished",
    subjects: ["ci:api", `ci:api#${id}`],
    data: { id },
  });
  const deliveriesOf = (subscriptionId: string) =>
    rx.deliveries.filter((d: Delivery) => d.subscriptionId === subscriptionId);

  const GH_ARGS = { repository: "acme-org/api", provider: "webhook" };
  const CI_ARGS = { subject: "ci:api*" };
  let client: Client;
  let ghSub: Record<string, any>;
  let ciSub: Record<string, any>;

  it("advertises the events capability to a 2025-era client and the extension to a 2026-07-28 client", async () => {
    // On the wire: the v1 client's getServerCapabilities() keeps only the capability keys it knows.
    const init = await fx.daemon.fetch("/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
      }),
    });
    const legacyCaps = ((await init.json()) as { result: { capabilities: Record<string, unknown> } }).result
      .capabilities;
    expect(legacyCaps.events).toEqual({ listChanged: false });
    expect(legacyCaps).not.toHaveProperty("extensions");
    client = await legacyClient();
    const modern = new ModernClient(
      { name: "svc-e2e-events-modern", version: "0.0.0" },
      { versionNegotiation: { mode: "auto" } },
    );
    await modern.connect(
      new ModernTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${fx.daemon.token}` } },
      }),
    );
    expect(modern.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(modern.getServerCapabilities()?.extensions?.["io.modelcontextprotocol/events"]).toEqual({
      listChanged: false,
    });
    await modern.close();
  });

  it("lists the event types of the loaded providers with their schemas and delivery modes", async () => {
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call(client, "events/list", cursor ? { cursor } : {});
      for (const e of page.events) {
        expect(e).toMatchObject({
          name: expect.any(String),
          description: expect.any(String),
          delivery: expect.arrayContaining(["webhook", "poll"]),
        });
        expect(e.inputSchema.type).toBe("object");
        expect(e.payloadSchema.type).toBe("object");
        names.push(e.name);
      }
      cursor = page.nextCursor;
    } while (cursor);
    expect(names).toEqual(expect.arrayContaining(["github.pull_request", "agentpush.event"]));
  });

  it("subscribes by webhook after the challenge (with the subscription id), and delivers a GitHub event and an agentpush event", async () => {
    const mcp = await mcpClient(fx.daemon.baseUrl, fx.daemon.token);
    await mcp.json("setup_sentinel_provider", {
      provider: "webhook",
      settings: { secret: GH_SECRET, publicBaseUrl: "https://svc.example.com" },
    });
    await mcp.close();

    const challenges = rx.challenges;
    ghSub = await call(client, "events/subscribe", {
      name: "github.pull_request",
      arguments: GH_ARGS,
      delivery: { mode: "webhook", url: rx.url, secret: secret(1) },
      ttlMs: 3_600_000,
    });
    expect(ghSub.id).toMatch(/^sub_[0-9a-f]{32}$/);
    expect(rx.challenges).toBe(challenges + 1);
    expect(Date.parse(ghSub.refreshBefore)).toBeGreaterThan(Date.now());
    expect(ghSub).toMatchObject({ truncated: false, deliveryStatus: { active: true } });
    ciSub = await call(client, "events/subscribe", {
      name: "agentpush.event",
      arguments: CI_ARGS,
      delivery: { mode: "webhook", url: rx.url, secret: secret(1) },
    });
    expect(ciSub.id).not.toBe(ghSub.id);

    // `sentinel list` shows each subscription as a webhook sentinel with its subscription id.
    const listed = (await (await fx.daemon.fetch("/sentinels")).json()) as {
      sentinels: Array<{ spec: { target: Record<string, unknown> } }>;
    };
    expect(listed.sentinels.map((s) => s.spec.target.subscriptionId).sort()).toEqual([ghSub.id, ciSub.id].sort());

    expect(
      (await deliverGithub(payload("pull_request.opened"), "pull_request", "a1a1a1a1-0000-4000-8000-000000000001"))
        .status,
    ).toBe(200);
    await push([ciEvent("evt_ci_1")]);
    const [gd] = await until(
      () => (deliveriesOf(ghSub.id).length === 1 ? deliveriesOf(ghSub.id) : undefined),
      "the GitHub occurrence",
    );
    const [cd] = await until(
      () => (deliveriesOf(ciSub.id).length === 1 ? deliveriesOf(ciSub.id) : undefined),
      "the agentpush occurrence",
    );
    expect(rx.unverified).toHaveLength(0);
    expect(JSON.parse(gd!.body)).toMatchObject({
      eventId: "a1a1a1a1-0000-4000-8000-000000000001",
      name: "github.pull_request",
      timestamp: expect.any(String),
      data: { type: "github.pull_request.opened", subjects: expect.arrayContaining(["github:acme-org/api"]) },
    });
    expect(gd!.id).toBe("a1a1a1a1-0000-4000-8000-000000000001");
    expect(JSON.parse(cd!.body)).toMatchObject({
      eventId: "evt_ci_1",
      name: "agentpush.event",
      data: { type: "ci.build.finished", payload: { id: "evt_ci_1" } },
    });
  });

  it("a repeat is an idempotent refresh: same id, a new secret verified first, both signatures verify during the window", async () => {
    rx.secrets.push(secret(2));
    const refreshed = await call(client, "events/subscribe", {
      name: "agentpush.event",
      arguments: { ...CI_ARGS },
      delivery: { mode: "webhook", url: rx.url, secret: secret(2) },
    });
    expect(refreshed.id).toBe(ciSub.id);
    await push([ciEvent("evt_ci_2")]);
    const d = await until(
      () => deliveriesOf(ciSub.id).find((x) => x.id === "evt_ci_2"),
      "the delivery after the refresh",
    );
    expect(d.signatures).toBe(2);
    expect(d.verifiedBy).toEqual([0, 1]);
    const listed = (await (await fx.daemon.fetch("/sentinels")).json()) as { sentinels: unknown[] };
    expect(listed.sentinels).toHaveLength(2);
  });

  it("polls with a cursor and gets exactly the events after it", async () => {
    const first = await call(client, "events/poll", {
      name: "agentpush.event",
      arguments: { subject: "ci:web*" },
      cursor: null,
    });
    expect(first).toMatchObject({ events: [], hasMore: false, truncated: false, nextPollMs: expect.any(Number) });
    expect(first.cursor).toEqual(expect.any(String));
    await push(
      [ciEvent("evt_web_1"), ciEvent("evt_web_2")].map((e) => ({ ...e, subjects: ["ci:web", `ci:web#${e.id}`] })),
    );
    const second = await call(client, "events/poll", {
      name: "agentpush.event",
      arguments: { subject: "ci:web*" },
      cursor: first.cursor,
    });
    expect(second.events.map((e: { eventId: string }) => e.eventId)).toEqual(["evt_web_1", "evt_web_2"]);
    expect(second.events[0]).toMatchObject({
      name: "agentpush.event",
      data: { type: "ci.build.finished", subjects: ["ci:web", "ci:web#evt_web_1"] },
    });
    await push([{ ...ciEvent("evt_web_3"), subjects: ["ci:web"] }]);
    const third = await call(client, "events/poll", {
      name: "agentpush.event",
      arguments: { subject: "ci:web*" },
      cursor: second.cursor,
    });
    expect(third.events.map((e: { eventId: string }) => e.eventId)).toEqual(["evt_web_3"]);
    const again = await call(client, "events/poll", {
      name: "agentpush.event",
      arguments: { subject: "ci:web*" },
      cursor: second.cursor,
    });
    expect(again.events.map((e: { eventId: string }) => e.eventId)).toEqual(["evt_web_3"]);
  });

  it("unsubscribes by the same key (idempotently) and receives nothing more", async () => {
    expect(
      await call(client, "events/unsubscribe", {
        name: "agentpush.event",
        arguments: CI_ARGS,
        delivery: { url: rx.url },
      }),
    ).toEqual({});
    expect(
      await call(client, "events/unsubscribe", {
        name: "agentpush.event",
        arguments: CI_ARGS,
        delivery: { url: rx.url },
      }),
    ).toEqual({});
    const before = deliveriesOf(ciSub.id).length;
    const pushed = await push([ciEvent("evt_ci_after")]);
    // The answer comes once every matched event is durably accepted: nothing matched it.
    expect(pushed.matched).toEqual([]);
    expect(deliveriesOf(ciSub.id)).toHaveLength(before);
  });

  it("keeps a null-TTL subscription across a daemon restart and delivers to it", async () => {
    const forever = await call(client, "events/subscribe", {
      name: "agentpush.event",
      arguments: { subject: "ci:ops*" },
      delivery: { mode: "webhook", url: rx.url, secret: secret(1) },
      ttlMs: null,
    });
    expect(forever.refreshBefore).toBeNull();
    await client.close();
    await fx.start();
    client = await legacyClient();
    await push([{ ...ciEvent("evt_ops_1"), subjects: ["ci:ops"] }]);
    const d = await until(
      () => deliveriesOf(forever.id).find((x) => x.id === "evt_ops_1"),
      "the delivery after the restart",
    );
    expect(JSON.parse(d.body)).toMatchObject({ eventId: "evt_ops_1", name: "agentpush.event" });
    await client.close();
  });
});
