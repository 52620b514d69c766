/**
 * Endpoint health of webhook sentinels, against a real HTTPS receiver on loopback (real TLS), the
 * real outbox, dispatcher and vault, and the standardwebhooks verifier: suspension after 5 rows in
 * a row ran out of attempts, pending rows while suspended (never attempted), a reopened target
 * keeping it, and every way back (resume, refresh, a fresh challenge from `svc webhooks check`).
 */
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHostEgress, type HostEgress } from "../../../core/egress/host-egress.js";
import type { Sleep } from "../../../core/plugin-api/index.js";
import { FakeClock } from "../../../core/runtime/clock.js";
import { createChallengeVerifier } from "../../../plugins/webhook-target/challenge.js";
import { signWithKey } from "../../../plugins/webhook-target/signer.js";
import { createWebhookTarget, type WebhookTarget } from "../../../plugins/webhook-target/target.js";
import { makeTempHome } from "../../support/cli.js";
import {
  LOOPBACK_ALLOWED,
  echoChallenge,
  fakeSentinels,
  recordingEvents,
  secretOf,
  startReceiver,
  testContext,
  type FakeSentinels,
  type Receiver,
  type SeenRequest,
  waitFor,
} from "./support/harness.js";

const SECRET = secretOf(21);

/** A Sleep that resolves at once, except while held: then each wait parks until released. */
function holdableSleep() {
  let holding = false;
  const parked: Array<() => void> = [];
  const sleep: Sleep = async (_ms, signal) => {
    if (signal?.aborted) throw signal.reason;
    if (holding) await new Promise<void>((resolve) => parked.push(resolve));
  };
  return Object.assign(sleep, {
    parked,
    hold: (on: boolean) => void (holding = on),
    release: () => parked.splice(0).forEach((f) => f()),
  });
}

describe("endpoint health of webhook sentinels (real HTTPS receiver, real outbox)", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  let rx: Receiver;
  let sentinels: FakeSentinels;
  let clock: FakeClock;
  let egress: HostEgress;
  let events: ReturnType<typeof recordingEvents>;
  let targets: WebhookTarget[];
  let sleeps: Array<ReturnType<typeof holdableSleep>>;
  let url: string;
  /** What the receiver answers a delivery (challenges are echoed). */
  let answer: number;

  const makeTarget = (opts: { suspendedBacklogMax?: number } = {}) => {
    const sleep = holdableSleep();
    sleeps.push(sleep);
    const { ctx } = testContext(home, sentinels, { clock, sleep, egress, events });
    const verifier = createChallengeVerifier({
      egress: ctx.service("egress"),
      clock,
      random: ctx.random,
      sign: signWithKey,
    });
    const target = createWebhookTarget(ctx, { verifier, tickMs: 0, ...opts });
    targets.push(target);
    return { target, sleep };
  };
  const createSentinel = async (
    target: WebhookTarget,
    id = "snt_1",
    extra: Record<string, unknown> = {},
    secret = SECRET,
  ) => {
    const stored = await target.create(
      { kind: "webhook", url, secret, ...extra },
      { sentinelId: id, principal: "token:boot" },
    );
    sentinels.add(id, stored);
    return stored;
  };
  const push = (target: WebhookTarget, eventId: string, id = "snt_1", data: unknown = { n: eventId }) =>
    target.deliver({
      sentinel: sentinels.get(id)!,
      event: { id: eventId, type: "ci.build.finished", subjects: ["ci:api"], time: "2026-01-01T00:00:00.000Z", data },
    });
  const sentTo = (eventId: string) => rx.seen.filter((s) => s.headers["webhook-id"] === eventId);
  const rowsOf = async (target: WebhookTarget, id = "snt_1") => (await target.outbox()).rowsOf(id);
  const statusOf = (target: WebhookTarget, id = "snt_1") =>
    target.project(sentinels.get(id)!.spec.target, { sentinelId: id }).deliveryStatus as Record<string, unknown>;
  const verify = (secret: string, s: SeenRequest) =>
    new Webhook(secret).verify(s.body.toString(), s.headers as Record<string, string>);

  beforeEach(async () => {
    ({ home, cleanup } = await makeTempHome("svc-whhealth-"));
    rx = await startReceiver();
    answer = 200;
    rx.handle(echoChallenge((_r, res) => res.writeHead(answer).end()));
    url = `https://127.0.0.1:${rx.port}/cb?k=v`;
    sentinels = fakeSentinels();
    clock = new FakeClock(Date.now());
    egress = createHostEgress({ allowSubnets: () => LOOPBACK_ALLOWED });
    events = recordingEvents();
    targets = [];
    sleeps = [];
  });
  afterEach(async () => {
    for (const s of sleeps) {
      s.hold(false);
      s.release();
    }
    for (const t of targets) await t.stop?.();
    await egress.close();
    await rx.close();
    await cleanup();
  });

  it("suspends after 5 rows in a row ran out of attempts; new events wait pending, unsent; a reopened target keeps it; resume sends each pending event once", async () => {
    const { target, sleep } = makeTarget();
    await createSentinel(target);
    answer = 500;
    // A row in retry when the suspension comes: its wait before attempt 2 is held.
    sleep.hold(true);
    await push(target, "in-retry");
    await waitFor(() => sleep.parked.length === 1, "in-retry waiting to retry");
    sleep.hold(false);
    for (let i = 1; i <= 4; i++) await push(target, `f${i}`);
    const outbox = await target.outbox();
    const dead = (...ids: string[]) =>
      ids.every((id) => outbox.rowsOf("snt_1").find((r) => r.eventId === id)?.status === "dead");
    await waitFor(() => dead("f1", "f2", "f3", "f4"), "f1..f4 to run out of attempts");
    expect(sentinels.get("snt_1")!.spec.target.suspended).toBeUndefined();
    expect(events.events).toEqual([]);
    expect(statusOf(target)).toEqual({ active: true, lastError: "http_5xx" });

    await push(target, "f5");
    await waitFor(() => sentinels.get("snt_1")!.spec.target.suspended !== undefined, "the suspension");
    const since = new Date(clock.now()).toISOString();
    expect(sentinels.get("snt_1")!.spec.target.suspended).toEqual({
      since: clock.now(),
      reason: "consecutive_failures",
      lastError: "http_5xx",
    });
    expect(events.events).toEqual([
      { type: "sentinel:delivery-suspended", data: { sentinelId: "snt_1", reason: "consecutive_failures", since } },
    ]);
    expect(statusOf(target)).toEqual({ active: false, reason: "consecutive_failures", since, lastError: "http_5xx" });

    // The row that was in retry wakes up suspended: it stays pending, with the attempt it had.
    sleep.release();
    await target.idle();
    expect(outbox.rowsOf("snt_1").find((r) => r.eventId === "in-retry")!.status).toBe("pending");
    expect(sentTo("in-retry")).toHaveLength(1);

    // New matches are accepted as pending rows and never attempted.
    answer = 200;
    await push(target, "n1");
    await push(target, "n2");
    await target.tick();
    expect(sentTo("n1")).toHaveLength(0);
    expect(sentTo("n2")).toHaveLength(0);
    const pending = (await rowsOf(target)).filter((r) => r.status === "pending");
    expect(pending.map((r) => [r.eventId, r.deliveryState.attempts]).sort()).toEqual([
      ["in-retry", 1],
      ["n1", 0],
      ["n2", 0],
    ]);

    // Reopened (a daemon restart): still suspended, still nothing sent.
    await target.stop!();
    const { target: again } = makeTarget();
    await again.start!();
    await again.tick();
    expect(sentTo("n1")).toHaveLength(0);
    expect(statusOf(again)).toMatchObject({ active: false, reason: "consecutive_failures" });
    expect((await rowsOf(again)).filter((r) => r.status === "pending")).toHaveLength(3);

    // Resumed: every pending event arrives once, signed as always; the daemon event says how many.
    expect(await again.resume!(sentinels.get("snt_1")!)).toEqual({ resumed: true, pending: 3 });
    await waitFor(
      () => ["in-retry", "n1", "n2"].every((id) => sentTo(id).some((s) => s.headers["webhook-id"] === id)),
      "the pending events",
    );
    await again.idle();
    for (const id of ["n1", "n2"]) expect(sentTo(id)).toHaveLength(1);
    expect(sentTo("in-retry")).toHaveLength(2);
    for (const id of ["in-retry", "n1", "n2"])
      expect(verify(SECRET, sentTo(id).at(-1)!)).toMatchObject({ id, data: { n: id } });
    expect(
      (await rowsOf(again))
        .filter((r) => ["in-retry", "n1", "n2"].includes(r.eventId))
        .map((r) => [r.status, r.deliveryState.attempts]),
    ).toEqual([
      ["delivered", 1],
      ["delivered", 1],
      ["delivered", 1],
    ]);
    expect(events.events.at(-1)).toEqual({
      type: "sentinel:delivery-resumed",
      data: { sentinelId: "snt_1", pending: 3 },
    });
    expect(sentinels.get("snt_1")!.spec.target.suspended).toBeUndefined();
    expect(statusOf(again)).toEqual({
      active: true,
      lastDeliveryAt: new Date(clock.now()).toISOString(),
      lastError: null,
    });
    expect(await again.resume!(sentinels.get("snt_1")!)).toEqual({ resumed: false, pending: 0 });
  });

  it("a suspended sentinel keeps at most its backlog waiting: a match beyond it is stored dead (suspended_backlog), replayable", async () => {
    const { target } = makeTarget({ suspendedBacklogMax: 2 });
    await createSentinel(target);
    answer = 500;
    for (let i = 1; i <= 5; i++) await push(target, `f${i}`);
    await target.idle();
    expect(sentinels.get("snt_1")!.spec.target.suspended).toMatchObject({ reason: "consecutive_failures" });
    for (const id of ["w1", "w2", "w3"]) await push(target, id);
    const row = async (id: string) => (await rowsOf(target)).find((r) => r.eventId === id)!;
    expect([(await row("w1")).status, (await row("w2")).status]).toEqual(["pending", "pending"]);
    expect(await row("w3")).toMatchObject({ status: "dead", deadReason: "suspended_backlog", seen: true });
    expect((await row("w3")).deliveryState.lastError).toMatch(/suspended and 2 events of this sentinel already wait/);
    expect(sentinels.seen).toContainEqual(["snt_1", "w3"]);
    expect(sentTo("w3")).toHaveLength(0);

    answer = 200;
    expect(await target.resume!(sentinels.get("snt_1")!)).toEqual({ resumed: true, pending: 2 });
    await target.idle();
    expect(await target.replay("snt_1", { eventId: "w3" })).toMatchObject({
      replayed: [{ eventId: "w3", was: "dead" }],
    });
    await target.idle();
    for (const id of ["w1", "w2", "w3"]) {
      expect(sentTo(id)).toHaveLength(1);
      expect(verify(SECRET, sentTo(id)[0]!)).toMatchObject({ id, data: { n: id } });
    }
  });

  it("counts only rows in a row: a delivery success starts the count again; a 410 neither counts nor breaks it", async () => {
    const { target } = makeTarget();
    await createSentinel(target);
    const deliver = async (status: number, ...ids: string[]) => {
      answer = status;
      for (const id of ids) await push(target, id);
      await target.idle();
    };
    await deliver(500, "a1", "a2", "a3", "a4");
    await deliver(200, "ok");
    await deliver(500, "b1", "b2", "b3", "b4");
    await deliver(410, "gone");
    expect(sentinels.get("snt_1")!.spec.target.suspended).toBeUndefined();
    expect(statusOf(target)).toMatchObject({ active: true, lastError: "http_4xx" });
    await deliver(500, "b5");
    expect(sentinels.get("snt_1")!.spec.target.suspended).toMatchObject({
      reason: "consecutive_failures",
      lastError: "http_5xx",
    });
  });

  it("an MCP subscription's deliveries are EventOccurrences under X-MCP-Subscription-Id; a plain sentinel's are unchanged", async () => {
    const { target } = makeTarget();
    const mcp = { subscriptionId: "sub_a3f1c8e2b0d49f7e", eventName: "ci.build" };
    const stored = await createSentinel(target, "snt_m", { mcp });
    expect(stored).toMatchObject({ mcp });
    expect(rx.seen[0]!.headers["x-mcp-subscription-id"]).toBe(mcp.subscriptionId);
    await createSentinel(target, "snt_p");
    await push(target, "e1", "snt_m");
    await push(target, "e1", "snt_p");
    await push(target, "big", "snt_m", { blob: "x".repeat(300_000) });
    await target.idle();
    const [m, p] = [
      rx.seen.find(
        (s) => s.headers["x-mcp-subscription-id"] === mcp.subscriptionId && s.headers["webhook-id"] === "e1",
      )!,
      sentTo("e1").find((s) => s !== undefined && s.headers["x-mcp-subscription-id"] === "snt_p")!,
    ];
    expect(JSON.parse(m.body.toString())).toEqual({
      eventId: "e1",
      name: "ci.build",
      timestamp: "2026-01-01T00:00:00.000Z",
      data: { type: "ci.build.finished", subjects: ["ci:api"], payload: { n: "e1" } },
      cursor: null,
    });
    expect(verify(SECRET, m)).toMatchObject({ eventId: "e1", name: "ci.build" });
    expect(JSON.parse(p.body.toString())).toMatchObject({ id: "e1", sentinelId: "snt_p", data: { n: "e1" } });
    expect(verify(SECRET, p)).toMatchObject({ id: "e1" });
    const big = sentTo("big")[0]!;
    expect(big.body.length).toBeLessThanOrEqual(262_144);
    expect(JSON.parse(big.body.toString())).toMatchObject({
      eventId: "big",
      data: { truncated: true, payload: { subject: "ci:api" } },
    });
    expect(target.project(sentinels.get("snt_m")!.spec.target, { sentinelId: "snt_m" })).toEqual({
      kind: "webhook",
      url,
      hasSecret: true,
      secretRedacted: true,
      subscriptionId: mcp.subscriptionId,
      eventName: "ci.build",
      verification: { at: expect.any(String), cached: expect.any(Boolean) },
      deliveryStatus: { active: true, lastDeliveryAt: expect.any(String), lastError: null },
    });
    await expect(
      createSentinel(target, "snt_bad", { mcp: { subscriptionId: "snt_1", eventName: "x" } }),
    ).rejects.toThrow();
    await expect(createSentinel(target, "snt_bad", { mcp: { ...mcp, extra: 1 } })).rejects.toThrow();
  });

  it("refresh: a new secret is challenged (both signatures, the subscription's id), then both sign; url and mcp must not change; it resumes", async () => {
    const { target } = makeTarget();
    const mcp = { subscriptionId: "sub_0123456789abcdef", eventName: "ci.build" };
    await createSentinel(target, "snt_m", { mcp });
    const next = secretOf(22, 48);
    const refresh = (input: Record<string, unknown>) =>
      target.refresh!(
        sentinels.get("snt_m")!,
        { kind: "webhook", url, secret: SECRET, mcp, ...input },
        { sentinelId: "snt_m", principal: "token:boot" },
      );

    expect(await refresh({})).toEqual({ rotated: false, resumed: false });
    for (const bad of [
      { url: `https://127.0.0.1:${rx.port}/other` },
      { mcp: { ...mcp, eventName: "other" } },
      { mcp: undefined },
      { headers: {} },
    ]) {
      await expect(refresh(bad)).rejects.toMatchObject({ code: "invalid_input" });
    }
    const challenges = rx.seen.length;
    expect(await refresh({ secret: next })).toEqual({ rotated: true, resumed: false });
    const challenge = rx.seen[challenges]!;
    expect(challenge.headers["x-mcp-subscription-id"]).toBe(mcp.subscriptionId);
    expect(verify(SECRET, challenge)).toMatchObject({ type: "verification" });
    expect(verify(next, challenge)).toMatchObject({ type: "verification" });

    await push(target, "r1", "snt_m");
    await target.idle();
    const d = sentTo("r1")[0]!;
    expect(String(d.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(verify(SECRET, d)).toMatchObject({ eventId: "r1" });
    expect(verify(next, d)).toMatchObject({ eventId: "r1" });

    // Suspended, a refresh (same secret) resumes it.
    answer = 500;
    for (let i = 0; i < 5; i++) await push(target, `x${i}`, "snt_m");
    await target.idle();
    expect(sentinels.get("snt_m")!.spec.target.suspended).toBeDefined();
    expect(events.events.at(-1)).toMatchObject({
      type: "sentinel:delivery-suspended",
      data: { sentinelId: "snt_m", subscriptionId: mcp.subscriptionId },
    });
    answer = 200;
    await push(target, "later", "snt_m");
    expect(await refresh({ secret: next })).toEqual({ rotated: false, resumed: true });
    await target.idle();
    expect(sentTo("later")).toHaveLength(1);
    expect(events.events.at(-1)).toEqual({
      type: "sentinel:delivery-resumed",
      data: { sentinelId: "snt_m", subscriptionId: mcp.subscriptionId, pending: 1 },
    });
  });

  it("checkCallbacks sends a fresh challenge to each suspended sentinel of the URL with its own secret and resumes those that echo it", async () => {
    const { target } = makeTarget();
    const other = secretOf(23);
    await createSentinel(target, "snt_a");
    await createSentinel(target, "snt_b", {}, other);
    await createSentinel(target, "snt_ok");
    answer = 500;
    for (const id of ["snt_a", "snt_b"]) for (let i = 0; i < 5; i++) await push(target, `${id}-${i}`, id);
    await target.idle();
    answer = 200;
    await push(target, "wait-a", "snt_a");
    const before = rx.seen.length;

    // A receiver that echoes only challenges signed with SECRET: snt_a answers, snt_b does not.
    rx.handle((req, res) => {
      const text = req.body.toString();
      if (!text.includes('"verification"')) return res.writeHead(answer).end();
      try {
        verify(SECRET, req);
      } catch {
        return res.writeHead(401).end();
      }
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ challenge: JSON.parse(text).challenge }));
    });
    const result = await target.checkCallbacks(url, "token:boot");
    expect(result.checked.sort((a, b) => a.sentinelId.localeCompare(b.sentinelId))).toEqual([
      { sentinelId: "snt_a", resumed: true, pending: 1 },
      { sentinelId: "snt_b", resumed: false, reason: "challenge_failed" },
    ]);
    // One challenge each (a success cached at creation does not stand in), none for the healthy snt_ok.
    const challenges = rx.seen.slice(before).filter((s) => s.body.toString().includes('"verification"'));
    expect(challenges.map((s) => s.headers["x-mcp-subscription-id"]).sort()).toEqual(["snt_a", "snt_b"]);
    await target.idle();
    expect(sentTo("wait-a")).toHaveLength(1);
    expect(sentinels.get("snt_b")!.spec.target.suspended).toBeDefined();
    expect((await target.checkCallbacks(`https://127.0.0.1:${rx.port}/elsewhere`, "token:boot")).checked).toEqual([]);
  });
});
