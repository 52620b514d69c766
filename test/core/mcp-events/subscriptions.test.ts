/**
 * Webhook subscriptions against the real engine, webhook target and event catalog, delivering to
 * a real HTTPS receiver on loopback that verifies with `standardwebhooks`.
 */
import { readFile, readdir, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MCP_EVENTS_LIMITS as L } from "../../../core/mcp-events/limits.js";
import { SUBSCRIPTIONS_FILE } from "../../../core/mcp-events/subscription-store.js";
import type { SvcEvent } from "../../../core/plugin-api/index.js";
import { FakeClock, realSleep } from "../../../core/runtime/clock.js";
import { writeCheckedDoc } from "../../../core/storage/checked-doc.js";
import { makeTempHome } from "../../support/cli.js";
import { startReceiver } from "../../support/https-receiver.js";
import { until } from "../../support/until.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.js";
import { OWNER, as, rpcFailure, startEventsHarness, type EventsHarness } from "./support/harness.js";

const secretOf = (fill: number) => `whsec_${Buffer.alloc(32, fill).toString("base64")}`;
const S1 = secretOf(1);
const S2 = secretOf(2);
const ev = (n: number, subject = "ci:api"): SvcEvent => ({
  id: `evt_${n}`,
  type: "ci.build.finished",
  subjects: [subject],
  data: { n },
});

describe("events/subscribe and events/unsubscribe (webhook)", () => {
  let rx: WebhookReceiver;
  let home: string;
  let cleanup: () => Promise<void>;
  let h: EventsHarness;
  let clock: FakeClock;
  const delivered = (n: number) =>
    until(() => (rx.deliveries.length === n ? rx.deliveries : undefined), `${n} deliveries`);
  const params = (extra: Record<string, unknown> = {}, delivery: Record<string, unknown> = {}) => ({
    name: "agentpush.event",
    arguments: { subject: "ci:api*" },
    delivery: { mode: "webhook", url: rx.url, secret: S1, ...delivery },
    ...extra,
  });
  const subscribe = (extra: Record<string, unknown> = {}, delivery: Record<string, unknown> = {}, caller = OWNER) =>
    h.call("events/subscribe", params(extra, delivery), caller);
  const records = async (): Promise<Array<Record<string, any>>> => {
    try {
      return JSON.parse(await readFile(join(home, SUBSCRIPTIONS_FILE), "utf8")).subscriptions;
    } catch {
      return [];
    }
  };
  const restart = async () => {
    await h.stop();
    h = await startEventsHarness(home, { clock });
  };

  beforeAll(async () => {
    rx = await startWebhookReceiver([S1]);
  });
  afterAll(async () => {
    await rx.close();
  });
  beforeEach(async () => {
    ({ home, cleanup } = await makeTempHome("svc-mcp-sub-"));
    clock = new FakeClock(Date.now());
    h = await startEventsHarness(home, { clock });
    rx.deliveries.length = 0;
    rx.challengeIds.length = 0;
    rx.secrets = [S1];
    rx.wrongEcho = false;
  });
  afterEach(async () => {
    await h.stop();
    await cleanup();
  });

  it("verifies the callback with the subscription id before storing anything, then is a webhook sentinel labelled with it", async () => {
    const r = await subscribe();
    expect(r).toEqual({
      id: expect.stringMatching(/^sub_[0-9a-f]{32}$/),
      refreshBefore: new Date(clock.now() + L.ttlDefaultMs).toISOString(),
      cursor: null,
      truncated: false,
      deliveryStatus: { active: true, lastError: null },
      sentinelId: expect.stringMatching(/^snt_/),
    });
    expect(rx.challengeIds).toEqual([r.id]);
    const [sentinel, ...others] = await h.engine.list();
    expect(others).toEqual([]);
    expect(sentinel).toMatchObject({
      id: r.sentinelId,
      spec: {
        label: r.id,
        until: { kind: "never" },
        provider: "agentpush",
        // Listed with its query values redacted (core/redaction/url.ts); the record keeps the real URL.
        target: {
          kind: "webhook",
          url: rx.listedUrl,
          subscriptionId: r.id,
          eventName: "agentpush.event",
        },
      },
    });
    const stored = await readFile(join(home, SUBSCRIPTIONS_FILE), "utf8");
    expect(stored).toContain(r.id);
    expect(stored).not.toContain(S1.slice(6));
    expect(await records()).toEqual([
      {
        id: r.id,
        sentinelId: r.sentinelId,
        principalKey: "owner",
        name: "agentpush.event",
        arguments: { subject: "ci:api*" },
        url: rx.url,
        expiresAt: clock.now() + L.ttlDefaultMs,
        createdAt: clock.now(),
        refreshedAt: clock.now(),
      },
    ]);
  });

  it("delivers matching events as signed EventOccurrences carrying X-MCP-Subscription-Id", async () => {
    const { id } = await subscribe();
    const result = (await h.push([ev(1, "ci:web"), ev(2)])) as { matched: unknown[] };
    expect(result.matched).toHaveLength(1);
    const [d] = await delivered(1);
    expect(d).toMatchObject({ id: "evt_2", subscriptionId: id, verifiedBy: [0] });
    expect(JSON.parse(d!.body)).toEqual({
      eventId: "evt_2",
      name: "agentpush.event",
      timestamp: expect.any(String),
      data: { type: "ci.build.finished", subjects: ["ci:api"], payload: { n: 2 } },
      cursor: null,
    });
  });

  it("a repeat is a refresh: the same id and sentinel, the TTL granted again, a new secret rotated (both sign meanwhile)", async () => {
    const first = await subscribe();
    clock.advance(120_000);
    rx.secrets = [S1, S2];
    const again = await subscribe({ ttlMs: 600_000 }, { secret: S2 });
    expect(again).toMatchObject({
      id: first.id,
      sentinelId: first.sentinelId,
      refreshBefore: new Date(clock.now() + 600_000).toISOString(),
      deliveryStatus: { active: true },
    });
    expect(await h.engine.list()).toHaveLength(1);
    expect(rx.challengeIds).toEqual([first.id, first.id]);
    expect((await records())[0]).toMatchObject({
      id: first.id,
      expiresAt: clock.now() + 600_000,
      createdAt: clock.now() - 120_000,
      refreshedAt: clock.now(),
    });
    await h.push([ev(3)]);
    const [d] = await delivered(1);
    expect(d).toMatchObject({ subscriptionId: first.id, verifiedBy: [0, 1], signatures: 2 });
  });

  it("arguments compare canonically: another key order is the same subscription", async () => {
    const a = await subscribe({ arguments: { subject: "ci:api", types: ["ci.*"] } });
    const b = await subscribe({ arguments: { types: ["ci.*"], subject: "ci:api" } });
    expect(b.id).toBe(a.id);
    expect(await h.engine.list()).toHaveLength(1);
  });

  it("TTLs: a short one clamped up to the minimum, a long one down to the maximum, null none", async () => {
    const now = clock.now();
    expect((await subscribe({ ttlMs: 1_000, arguments: { subject: "ci:a" } })).refreshBefore).toBe(
      new Date(now + L.ttlMinMs).toISOString(),
    );
    expect((await subscribe({ ttlMs: 30 * 86_400_000, arguments: { subject: "ci:b" } })).refreshBefore).toBe(
      new Date(now + L.ttlMaxMs).toISOString(),
    );
    expect((await subscribe({ ttlMs: null, arguments: { subject: "ci:c" } })).refreshBefore).toBeNull();
    // A refresh with a finite TTL ends "no expiry".
    expect((await subscribe({ ttlMs: 120_000, arguments: { subject: "ci:c" } })).refreshBefore).toBe(
      new Date(now + 120_000).toISOString(),
    );
  });

  it("a null-TTL subscription is kept across a restart, still delivering, and outlives every sweep", async () => {
    const { id, sentinelId } = await subscribe({ ttlMs: null });
    const lapsing = await subscribe({ arguments: { subject: "ci:other" } });
    await restart();
    await h.push([ev(4)]);
    const [d] = await delivered(1);
    expect(d).toMatchObject({ id: "evt_4", subscriptionId: id });
    clock.advance(L.ttlMaxMs + 1);
    expect((await (await h.runtime()).sweep()).lapsed).toEqual([lapsing.id]);
    expect((await h.engine.list()).map((s) => s.id)).toEqual([sentinelId]);
    expect((await records()).map((r) => r.id)).toEqual([id]);
  });

  it("a lapsed subscription is removed with its sentinel by the sweep, and at start", async () => {
    const { id } = await subscribe();
    const runtime = await h.runtime();
    clock.advance(L.ttlDefaultMs - 1);
    expect((await runtime.sweep()).lapsed).toEqual([]);
    clock.advance(1);
    expect((await runtime.sweep()).lapsed).toEqual([id]);
    expect(await h.engine.list()).toEqual([]);
    expect(await records()).toEqual([]);
    await subscribe({ arguments: { subject: "ci:later" } });
    await h.stop();
    clock.advance(L.ttlDefaultMs);
    h = await startEventsHarness(home, { clock });
    expect(await h.engine.list()).toEqual([]);
    expect(await records()).toEqual([]);
  });

  it("unsubscribe removes the subscription and its sentinel, nothing more is delivered; an unknown key answers {} too", async () => {
    const { id } = await subscribe({ arguments: { subject: "ci:api", types: ["ci.*"] } });
    const key = {
      name: "agentpush.event",
      arguments: { types: ["ci.*"], subject: "ci:api" },
      delivery: { url: rx.url },
    };
    expect(await h.call("events/unsubscribe", key)).toEqual({});
    expect(await h.engine.list()).toEqual([]);
    expect(await records()).toEqual([]);
    expect(((await h.push([ev(5)])) as { matched: unknown[] }).matched).toEqual([]);
    expect(await h.call("events/unsubscribe", key)).toEqual({});
    expect(await h.call("events/unsubscribe", { ...key, name: "no.such-type" })).toEqual({});
    expect(id).toMatch(/^sub_/);
  });

  it("someone removing the sentinel (svc sentinel unwatch) ends the subscription; subscribing again makes a new one", async () => {
    const first = await subscribe();
    await h.engine.remove(first.sentinelId);
    await until(async () => ((await records()).length === 0 ? true : undefined), "the record removed");
    const again = await subscribe();
    expect(again.id).toBe(first.id);
    expect(again.sentinelId).not.toBe(first.sentinelId);
  });

  it(`keeps at most ${L.subscriptionsPerPrincipal} subscriptions per caller: then -32013 {limit: subscriptions}`, async () => {
    for (let i = 0; i < L.subscriptionsPerPrincipal; i++) await subscribe({ arguments: { subject: `ci:${i}` } });
    const err = await rpcFailure(subscribe({ arguments: { subject: "ci:one-more" } }));
    expect(err).toMatchObject({ code: -32013, data: { limit: "subscriptions", max: L.subscriptionsPerPrincipal } });
    expect(await records()).toHaveLength(L.subscriptionsPerPrincipal);
    await subscribe({ arguments: { subject: "ci:0" } }); // a refresh is no new subscription
    await subscribe({ arguments: { subject: "ci:one-more" } }, {}, as("remote:pairing:p1:operate"));
  }, 60_000);

  it.each<[string, () => Record<string, unknown>, number, Record<string, unknown>]>([
    ["an http callback", () => params({}, { url: "http://127.0.0.1/hook" }), -32602, { reason: "invalid_url" }],
    [
      "a callback with credentials",
      () => params({}, { url: "https://u:p@127.0.0.1/hook" }),
      -32602,
      { reason: "invalid_url" },
    ],
    ["no callback", () => params({}, { url: undefined }), -32602, { reason: "invalid_url" }],
    ["a secret that is no whsec_", () => params({}, { secret: "hunter2" }), -32602, { reason: "invalid_secret" }],
    [
      "a secret of 16 bytes",
      () => params({}, { secret: `whsec_${Buffer.alloc(16, 1).toString("base64")}` }),
      -32602,
      { reason: "invalid_secret" },
    ],
    ["a negative ttlMs", () => params({ ttlMs: -5 }), -32602, { reason: "invalid_ttl" }],
    ["a ttlMs that is no number", () => params({ ttlMs: "1h" }), -32602, { reason: "invalid_ttl" }],
    ["a fractional ttlMs", () => params({ ttlMs: 1.5 }), -32602, { reason: "invalid_ttl" }],
    ["push delivery", () => params({}, { mode: "push" }), -32014, { feature: "deliveryMode", value: "push" }],
    ["an unknown event type", () => params({ name: "no.such-type" }), -32011, { kind: "event" }],
    [
      "arguments the type refuses",
      () => params({ arguments: { subject: "" } }),
      -32602,
      { reason: "invalid_arguments" },
    ],
    [
      "no delivery",
      () => ({ name: "agentpush.event", arguments: { subject: "x" } }),
      -32602,
      { reason: "invalid_params" },
    ],
  ])("refuses %s, sending and storing nothing", async (_n, make, code, data) => {
    expect(await rpcFailure(h.call("events/subscribe", make()))).toMatchObject({ code, data });
    expect(rx.challengeIds).toEqual([]);
    expect(await h.engine.list()).toEqual([]);
    expect(await records()).toEqual([]);
  });

  it("a callback that fails its challenge answers -32015 with the sketch's category, and nothing is stored", async () => {
    rx.wrongEcho = true;
    expect(await rpcFailure(subscribe())).toMatchObject({
      code: -32015,
      data: { reason: "challenge_failed", svcReason: "challenge_failed" },
    });
    rx.wrongEcho = false;
    const refusing = await startReceiver();
    refusing.handle((_req, res) => res.writeHead(503).end("down"));
    try {
      expect(await rpcFailure(subscribe({}, { url: `https://127.0.0.1:${refusing.port}/hook` }))).toMatchObject({
        code: -32015,
        data: { reason: "challenge_failed", svcReason: "non_2xx" },
      });
    } finally {
      await refusing.close();
    }
    expect(await rpcFailure(subscribe({}, { url: `https://127.0.0.1:${await closedPort()}/hook` }))).toMatchObject({
      code: -32015,
      data: { reason: "connection_refused" },
    });
    expect(await h.engine.list()).toEqual([]);
    expect(await records()).toEqual([]);
  });

  it.each(["anonymous", "remote:tunnel", "remote:sealed", "remote:pairing:p1:read", "loopback"])(
    "refuses %s (-32012): subscribing needs an authenticated caller that may operate",
    async (principal) => {
      expect(await rpcFailure(subscribe({}, {}, as(principal)))).toMatchObject({ code: -32012 });
      expect(
        await rpcFailure(
          h.call(
            "events/unsubscribe",
            { name: "agentpush.event", arguments: { subject: "ci:api*" }, delivery: { url: rx.url } },
            as(principal),
          ),
        ),
      ).toMatchObject({ code: -32012 });
      expect(rx.challengeIds).toEqual([]);
    },
  );

  it("isolates callers: a pairing's subscription to the same key is its own, and the owner cannot remove it", async () => {
    const mine = await subscribe();
    const theirs = await subscribe({}, {}, as("remote:pairing:p1:operate"));
    expect(theirs.id).not.toBe(mine.id);
    await h.call("events/unsubscribe", {
      name: "agentpush.event",
      arguments: { subject: "ci:api*" },
      delivery: { url: rx.url },
    });
    expect((await h.engine.list()).map((s) => s.id)).toEqual([theirs.sentinelId]);
    expect((await records()).map((r) => r.principalKey)).toEqual(["pairing:p1"]);
  });

  it("a refresh of a suspended subscription answers active: false (the sketch: it has just reactivated it) and sends what waited", async () => {
    await h.stop();
    // The waits between delivery attempts (500 ms to 4 s) shortened; longer ones (setup timeouts) kept.
    h = await startEventsHarness(home, { clock, sleep: (ms, signal) => realSleep(ms < 10_000 ? 1 : ms, signal) });
    const { sentinelId } = await subscribe();
    const accepted = new Set<string>();
    rx.respond = (_d, res) => res.writeHead(500).end();
    try {
      await h.push([1, 2, 3, 4, 5].map((n) => ev(n)));
      const status = async () =>
        ((await h.engine.project(sentinelId)).spec.target as { deliveryStatus: { active: boolean } }).deliveryStatus;
      await until(async () => ((await status()).active === false ? true : undefined), "the suspension");
      await h.push([ev(6)]);
      rx.respond = (d, res) => {
        accepted.add(d.id);
        res.writeHead(200).end();
      };
      const refreshed = await subscribe();
      expect(refreshed.deliveryStatus).toEqual({
        active: false,
        failedSince: expect.any(String),
        reason: "consecutive_failures",
        lastError: "http_5xx",
      });
      await until(() => (accepted.has("evt_6") ? true : undefined), "the event that waited");
      // The receiver has the event; the dispatcher records its 2xx once the answer is read.
      const after = await until(async () => {
        const { deliveryStatus } = await subscribe();
        return deliveryStatus.lastError === null ? deliveryStatus : undefined;
      }, "the delivery recorded");
      expect(after).toMatchObject({ active: true, lastError: null });
    } finally {
      rx.respond = (_d, res) => res.writeHead(200).end("ok");
    }
  });

  describe("reconciled with the sentinels at load", () => {
    const rewrite = (subscriptions: unknown[]) =>
      writeCheckedDoc(join(home, SUBSCRIPTIONS_FILE), 1, "subscriptions", subscriptions);

    it("a record written ahead of its sentinel adopts it; one whose sentinel never came or is gone is dropped", async () => {
      const made = await subscribe();
      const [rec] = await records();
      await h.stop();
      const ghost = { ...rec, id: `sub_${"0".repeat(32)}`, sentinelId: null };
      const gone = { ...rec, id: `sub_${"1".repeat(32)}`, sentinelId: "snt_gone" };
      await rewrite([{ ...rec, sentinelId: null }, ghost, gone]);
      h = await startEventsHarness(home, { clock });
      expect(await records()).toEqual([rec]);
      await h.call("events/unsubscribe", {
        name: "agentpush.event",
        arguments: { subject: "ci:api*" },
        delivery: { url: rx.url },
      });
      expect(await h.engine.list()).toEqual([]);
      expect(made.sentinelId).toBe(rec!.sentinelId);
    });

    it("a sentinel svc made for a subscription without a record is removed", async () => {
      await subscribe();
      await h.stop();
      await rewrite([]);
      h = await startEventsHarness(home, { clock });
      expect(await h.engine.list()).toEqual([]);
    });

    it("damaged records are copied aside and read as none, keeping their sentinels", async () => {
      const { sentinelId } = await subscribe();
      await h.stop();
      await writeFile(join(home, SUBSCRIPTIONS_FILE), '{"version":1,"checksum":"00000000","subscriptions":[]}\n');
      h = await startEventsHarness(home, { clock });
      await h.runtime();
      expect((await h.engine.list()).map((s) => s.id)).toEqual([sentinelId]);
      expect((await readdir(home)).filter((f) => f.startsWith(`${SUBSCRIPTIONS_FILE}.damaged-`))).toHaveLength(1);
      expect(h.logs.join("\n")).toMatch(/MCP subscription records are damaged/);
    });
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
