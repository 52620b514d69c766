/**
 * A public client of the events extension's webhook mode against a real daemon: the Vercel AI
 * SDK's `@ai-sdk/mcp` (`experimental_events` subscribes, refreshes and unsubscribes;
 * `experimental_createMCPEventWebhook` is the receiver, verifying signatures and the
 * `X-MCP-Subscription-Id` routing itself) on a real HTTPS server.
 *
 * `@ai-sdk/mcp` 2.x (the line with events) requires Node 22 or later and svc installs with
 * engine-strict on Node 20, so it is not a dependency: this file runs when it can be imported,
 * either installed beside svc or from the folder named by `SVC_TEST_AI_SDK_MCP` (one whose
 * node_modules holds `@ai-sdk/mcp`, e.g. made with `npm i @ai-sdk/mcp@2` under Node 22), and is
 * skipped otherwise, saying why.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReceiver, type Receiver } from "../support/https-receiver.js";
import { useDaemonProcess } from "../support/cli.js";
import { LOOPBACK_CONFIG } from "../support/webhook-receiver.js";

type AiSdkMcp = Record<string, any>;

async function importAiSdk(): Promise<{ mod?: AiSdkMcp; why: string }> {
  const dir = process.env.SVC_TEST_AI_SDK_MCP;
  const specifier = dir ? pathToFileURL(join(dir, "node_modules/@ai-sdk/mcp/dist/index.js")).href : "@ai-sdk/mcp";
  try {
    return { mod: (await import(specifier)) as AiSdkMcp, why: "" };
  } catch (err) {
    return {
      why: `@ai-sdk/mcp cannot be imported (${(err as Error).message.split("\n")[0]}); it needs Node >= 22, see this file's comment`,
    };
  }
}

const aiSdk = await importAiSdk();
if (!aiSdk.mod) console.info(`skipped: ${aiSdk.why}`);

async function until<T>(fn: () => T | undefined | false, what: string, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in time`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(!aiSdk.mod)("MCP events with the AI SDK's experimental_events client and webhook receiver", () => {
  const fx = useDaemonProcess({ prefix: "svc-e2e-ai-sdk-", config: LOOPBACK_CONFIG });
  let rx: Receiver;
  const received: Array<{ subscriptionId: string; eventId: string; name: string; data: Record<string, unknown> }> = [];
  /** The application's private store the AI SDK asks for (in memory here). */
  const records = new Map<string, Record<string, any>>();
  const store = {
    get: async (key: string) => records.get(key),
    getById: async (id: string) => [...records.values()].find((r) => r.id === id),
    set: async (s: Record<string, any>) => void records.set(s.key, structuredClone(s)),
    update: async (key: string, patch: Record<string, unknown>) => {
      const cur = records.get(key);
      if (cur) records.set(key, { ...cur, ...structuredClone(patch) });
    },
    delete: async (key: string) => void records.delete(key),
  };

  beforeAll(async () => {
    const { experimental_createMCPEventWebhook } = aiSdk.mod!;
    const handler = experimental_createMCPEventWebhook({
      store,
      onEvent: async ({
        subscription,
        event,
      }: {
        subscription: { id: string };
        event: { eventId: string; name: string; data: Record<string, unknown> };
      }) => {
        received.push({ subscriptionId: subscription.id, eventId: event.eventId, name: event.name, data: event.data });
      },
    }) as (request: Request) => Promise<Response>;
    rx = await startReceiver();
    rx.handle((req, res) => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
      void handler(
        new Request(`https://127.0.0.1:${rx.port}${req.path}`, {
          method: req.method,
          headers,
          body: req.body.length ? new Uint8Array(req.body) : null,
        }),
      )
        .then(async (answer) => {
          res.writeHead(answer.status, Object.fromEntries(answer.headers));
          res.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch(() => res.writeHead(500).end());
    });
  });
  afterAll(async () => {
    await rx?.close();
  });

  it("subscribes with a secret the SDK generates, receives verified occurrences, refreshes and unsubscribes", async () => {
    const client = await aiSdk.mod!.experimental_createMCPClient({
      transport: {
        type: "http",
        url: `${fx.daemon.baseUrl}/mcp`,
        headers: { authorization: `Bearer ${fx.daemon.token}` },
      },
      experimental_events: { store },
    });
    try {
      const list = await client.experimental_events.list();
      expect(list.events.map((e: { name: string }) => e.name)).toContain("agentpush.event");

      const sub = await client.experimental_events.subscribe({
        name: "agentpush.event",
        arguments: { subject: "ci:sdk*" },
        delivery: { mode: "webhook", url: `https://127.0.0.1:${rx.port}/mcp-events` },
        ttlMs: 600_000,
      });
      expect(sub.id).toMatch(/^sub_/);
      expect(Date.parse(sub.refreshBefore)).toBeGreaterThan(Date.now());
      // The secret the SDK generated never left the store except in the subscribe request.
      const [record] = [...records.values()];
      expect(record).toMatchObject({ id: sub.id, status: "active" });
      expect(fx.daemon.logs()).not.toContain(record!.delivery.secret);

      const push = (id: string) =>
        fx.daemon.fetch("/providers/agentpush/events", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ id, type: "ci.build.finished", subjects: ["ci:sdk", `ci:sdk#${id}`], data: { id } }),
        });
      expect((await push("evt_sdk_1")).status).toBe(200);
      const got = await until(
        () => received.find((r) => r.eventId === "evt_sdk_1"),
        "the AI SDK receiver to accept the occurrence",
      );
      expect(got).toMatchObject({
        subscriptionId: sub.id,
        name: "agentpush.event",
        data: { type: "ci.build.finished", payload: { id: "evt_sdk_1" } },
      });

      const refreshed = await client.experimental_events.refresh({ id: sub.id });
      expect(refreshed.id).toBe(sub.id);
      expect((await push("evt_sdk_2")).status).toBe(200);
      await until(() => received.find((r) => r.eventId === "evt_sdk_2"), "the occurrence after the refresh");

      await client.experimental_events.unsubscribe({ id: sub.id });
      const after = (await (await push("evt_sdk_3")).json()) as { matched: unknown[] };
      expect(after.matched).toEqual([]);
      expect(received.map((r) => r.eventId)).toEqual(["evt_sdk_1", "evt_sdk_2"]);
    } finally {
      await client.close();
    }
  });
});
