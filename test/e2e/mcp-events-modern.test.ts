/**
 * The events extension on a real daemon process, calls made by the 2026-07-28 client (custom
 * requests: advertised in both eras, a webhook subscription delivering to a real HTTPS receiver
 * (standardwebhooks), a poll with a cursor, a `null`-TTL subscription still delivering after a
 * restart (the services load at start because records exist), and unsubscribe ending deliveries.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { useDaemonProcess } from "../support/cli.js";
import { until } from "../support/until.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(32, 27).toString("base64")}`;
const AnyResult = z.object({}).loose();
const KEY = { name: "agentpush.event", arguments: { subject: "ci:mcp*" } };

describe("MCP events on a real daemon process", () => {
  let rx: WebhookReceiver;
  const fx = useDaemonProcess({ prefix: "svc-e2e-mcp-events-", config: LOOPBACK_CONFIG });
  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
  });
  afterAll(async () => {
    await rx?.close();
  });

  const modern = async () => {
    const client = new ModernClient(
      { name: "svc-e2e", version: "0.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(
      new ModernTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${fx.daemon.token}` } },
      }),
    );
    return client;
  };
  const legacy = async () => {
    const client = new Client({ name: "svc-e2e", version: "0.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${fx.daemon.token}` } },
      }),
    );
    return client;
  };
  const call = async (method: string, params: Record<string, unknown>): Promise<Record<string, any>> => {
    const client = await modern();
    try {
      return (await client.request({ method, params }, AnyResult)) as Record<string, any>;
    } finally {
      await client.close();
    }
  };
  const push = async (id: string) => {
    const res = await fx.daemon.fetch("/providers/agentpush/events", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{ id, type: "ci.build.finished", subjects: ["ci:mcp"], data: { id } }]),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { matched: unknown[] };
  };
  const delivered = (id: string) => until(() => rx.deliveries.find((d) => d.id === id), `the delivery of ${id}`);

  it("is advertised to both eras and lists agentpush.event", async () => {
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
    expect(((await init.json()) as { result: { capabilities: unknown } }).result.capabilities).toMatchObject({
      events: { listChanged: false },
    });
    const v1 = await legacy();
    const listed = (await v1.request({ method: "events/list", params: {} }, AnyResult)) as {
      events: Array<{ name: string; delivery: string[] }>;
    };
    expect(listed.events.find((e) => e.name === "agentpush.event")).toMatchObject({ delivery: ["webhook", "poll"] });
    await v1.close();
    const v2 = await modern();
    expect(v2.getServerCapabilities()).toMatchObject({
      extensions: { "io.modelcontextprotocol/events": { listChanged: false } },
    });
    await v2.close();
  });

  let subscriptionId: string;

  it("subscribes by webhook (no expiry) and delivers a pushed event as a signed occurrence", async () => {
    const r = await call("events/subscribe", {
      ...KEY,
      delivery: { mode: "webhook", url: rx.url, secret: SECRET },
      ttlMs: null,
    });
    expect(r).toMatchObject({
      id: expect.stringMatching(/^sub_/),
      refreshBefore: null,
      cursor: null,
      truncated: false,
      deliveryStatus: { active: true },
    });
    subscriptionId = r.id;
    expect(rx.challengeIds).toEqual([r.id]);
    await push("evt_mcp_1");
    const d = await delivered("evt_mcp_1");
    expect(d).toMatchObject({ subscriptionId, verifiedBy: [0] });
    expect(JSON.parse(d.body)).toMatchObject({
      eventId: "evt_mcp_1",
      name: "agentpush.event",
      data: { type: "ci.build.finished", payload: { id: "evt_mcp_1" } },
      cursor: null,
    });
  });

  it("polls: a null cursor starts from now, the next poll answers exactly what came after it", async () => {
    const start = await call("events/poll", KEY);
    expect(start).toMatchObject({ events: [], truncated: false, hasMore: false });
    await push("evt_mcp_2");
    const next = await call("events/poll", { ...KEY, cursor: start.cursor });
    expect(next.events.map((e: { eventId: string }) => e.eventId)).toEqual(["evt_mcp_2"]);
  });

  it("after a restart the subscription still delivers, and a poll cursor of the old boot is a gap", async () => {
    const { cursor } = await call("events/poll", KEY);
    await fx.start();
    await push("evt_mcp_3");
    expect(await delivered("evt_mcp_3")).toMatchObject({ subscriptionId });
    expect(await call("events/poll", { ...KEY, cursor })).toMatchObject({ events: [], truncated: true });
  });

  it("unsubscribe ends it: its sentinel is gone and nothing more matches", async () => {
    const { _meta, ...rest } = await call("events/unsubscribe", { ...KEY, delivery: { url: rx.url } });
    expect(rest).toEqual({});
    const list = (await (await fx.daemon.fetch("/sentinels")).json()) as { sentinels: unknown[] };
    expect(list.sentinels).toEqual([]);
    expect((await push("evt_mcp_4")).matched).toEqual([]);
  });
});
