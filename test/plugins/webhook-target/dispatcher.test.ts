import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEgress, type Egress } from "../../../core/egress/egress.js";
import { FakeClock, createRandom } from "../../../core/runtime/clock.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { Dispatcher } from "../../../plugins/webhook-target/dispatcher.js";
import { EndpointHealth } from "../../../plugins/webhook-target/endpoint-health.js";
import { buildEnvelope } from "../../../plugins/webhook-target/envelope.js";
import { LIMITS } from "../../../plugins/webhook-target/limits.js";
import { Outbox } from "../../../plugins/webhook-target/outbox/outbox.js";
import { SecretVault } from "../../../plugins/webhook-target/vault.js";
import { makeTempHome } from "../../support/cli.js";
import {
  LOOPBACK_ALLOWED,
  fakeSentinels,
  recordingSleep,
  secretOf,
  startReceiver,
  type FakeSentinels,
  type Receiver,
  waitFor,
} from "./support/harness.js";

const SECRET = secretOf(5);

describe("webhook dispatcher against a real HTTPS receiver", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  let rx: Receiver;
  let egress: Egress;
  let outbox: Outbox;
  let vault: SecretVault;
  let sentinels: FakeSentinels;
  let sleep: ReturnType<typeof recordingSleep>;
  let clock: FakeClock;
  let dispatcher: Dispatcher;
  let logger: ReturnType<typeof createMemoryLogger>;

  // Attempts that are not about timeouts get a long one: a request a test holds on purpose must
  // not time out on a busy machine (the default 15 s is LIMITS' value, checked nowhere here).
  const setup = async (attemptTimeoutMs = 120_000) => {
    const health = new EndpointHealth({ sentinels: () => sentinels, events: () => undefined, clock, logger });
    dispatcher = new Dispatcher({
      outbox,
      vault,
      egress,
      sentinels: () => sentinels,
      health,
      clock,
      sleep,
      logger,
      attemptTimeoutMs,
    });
  };
  const addSentinel = async (
    id = "snt_1",
    url = `https://127.0.0.1:${rx.port}/hooks/secret-path?token=abc`,
    until?: { kind: "at"; ms: number },
  ) => {
    const secretRef = await vault.put(id, SECRET);
    sentinels.add(id, { kind: "webhook", url, secretRef }, until);
    return secretRef;
  };
  const push = async (eventId: string, sentinelId = "snt_1") => {
    const body = buildEnvelope(
      sentinelId,
      { id: eventId, type: "t.o.a", subjects: ["s:1"], data: { n: eventId } },
      clock.now(),
    );
    const { row } = await outbox.add({ sentinelId, eventId, body });
    dispatcher.enqueue(row.requestId);
    await dispatcher.idle();
    return { row: outbox.get(row.requestId)!, body };
  };

  beforeEach(async () => {
    ({ home, cleanup } = await makeTempHome("svc-dispatch-"));
    rx = await startReceiver();
    egress = createEgress({ allowSubnets: LOOPBACK_ALLOWED });
    clock = new FakeClock(Date.now());
    const random = createRandom(clock);
    logger = createMemoryLogger();
    outbox = await Outbox.open({ home, now: () => clock.now(), newId: () => `req_${random.ulid()}`, logger });
    vault = new SecretVault(home, random, () => clock.now());
    sentinels = fakeSentinels();
    sleep = recordingSleep();
    await setup();
  });
  afterEach(async () => {
    await dispatcher.stop(100);
    await outbox.close();
    await egress.close();
    await rx.close();
    await cleanup();
  });

  it("delivers with Standard Webhooks headers that the standardwebhooks package verifies, then marks the event seen", async () => {
    await addSentinel();
    const { row, body } = await push("evt_1");
    expect(row).toMatchObject({ status: "delivered", deliveryState: { attempts: 1, lastError: null } });
    expect(rx.seen).toHaveLength(1);
    const req = rx.seen[0]!;
    expect(req.body.equals(body)).toBe(true);
    expect(req.headers["webhook-id"]).toBe("evt_1");
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.headers["x-mcp-subscription-id"]).toBe("snt_1");
    expect(req.headers["webhook-timestamp"]).toBe(String(Math.floor(clock.now() / 1000)));
    expect(String(req.headers["webhook-signature"])).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(SECRET).verify(req.body.toString(), req.headers as Record<string, string>)).toMatchObject({
      id: "evt_1",
    });
    expect(sentinels.seen).toEqual([["snt_1", "evt_1"]]);
    expect(outbox.get(row.requestId)!.seen).toBe(true);
  });

  it("retries 500s with waits of 500 ms and 1 s, same id and bytes, fresh timestamps, then acks on 200", async () => {
    await addSentinel();
    let n = 0;
    rx.handle((_r, res) => {
      n++;
      if (n <= 2) res.writeHead(500).end("no");
      else res.writeHead(204).end();
      clock.advance(1_500);
    });
    const { row } = await push("evt_2");
    expect(row).toMatchObject({ status: "delivered", deliveryState: { attempts: 3 } });
    expect(sleep.waits).toEqual([500, 1_000]);
    expect(new Set(rx.seen.map((s) => s.headers["webhook-id"]))).toEqual(new Set(["evt_2"]));
    expect(new Set(rx.seen.map((s) => s.body.toString())).size).toBe(1);
    expect(new Set(rx.seen.map((s) => s.headers["webhook-timestamp"])).size).toBe(3);
    for (const s of rx.seen)
      expect(() =>
        new Webhook(SECRET).verify(s.body.toString(), {
          ...(s.headers as Record<string, string>),
          "webhook-timestamp": String(s.headers["webhook-timestamp"]),
        }),
      ).not.toThrow();
  });

  it("gives up after 5 attempts (waits 500 ms, 1 s, 2 s, 4 s) as dead delivered_rejected, naming only the host", async () => {
    await addSentinel();
    rx.handle((_r, res) => res.writeHead(503).end());
    const { row } = await push("evt_3");
    expect(row).toMatchObject({ status: "dead", deadReason: "delivered_rejected", deliveryState: { attempts: 5 } });
    expect(rx.seen).toHaveLength(5);
    expect(sleep.waits).toEqual([500, 1_000, 2_000, 4_000]);
    expect(row.deliveryState.lastError).toBe(`127.0.0.1:${rx.port} answered HTTP 503`);
    expect(sentinels.seen).toEqual([["snt_1", "evt_3"]]);
  });

  it.each([410, 413])("treats %i as terminal without retry", async (status) => {
    await addSentinel();
    rx.handle((_r, res) => res.writeHead(status).end());
    const { row } = await push(`evt_${status}`);
    expect(row).toMatchObject({ status: "dead", deadReason: "delivered_rejected", deliveryState: { attempts: 1 } });
    expect(row.deliveryState.lastError).toContain(`HTTP ${status}`);
    expect(sleep.waits).toEqual([]);
  });

  it.each([
    [
      "a 301 to http",
      (res: import("node:http").ServerResponse) => res.writeHead(301, { location: "http://127.0.0.1/x" }).end(),
      /redirect/,
    ],
    [
      "a 302 to https",
      (res: import("node:http").ServerResponse) => res.writeHead(302, { location: "https://127.0.0.1/x" }).end(),
      /HTTP 302/,
    ],
    ["a 404", (res: import("node:http").ServerResponse) => res.writeHead(404).end(), /HTTP 404/],
    ["a connection reset", (res: import("node:http").ServerResponse) => res.socket?.destroy(), /connect/],
  ])("retries %s, and a later 200 acks", async (_name, fail, pattern) => {
    await addSentinel();
    let n = 0;
    // The first attempt's error, as the row records it while the retry is in flight.
    let lastError: string | null | undefined;
    rx.handle((_r, res) => {
      if (++n === 1) return fail(res);
      lastError = outbox.pending()[0]?.deliveryState.lastError;
      res.writeHead(200).end();
    });
    const { row } = await push("evt_r");
    expect(row).toMatchObject({ status: "delivered", deliveryState: { attempts: 2, lastError: null } });
    expect(lastError).toMatch(pattern);
    expect(lastError).not.toContain("/hooks");
    expect(lastError).not.toContain("token");
  });

  it("times out a slow callback (short injected timeout) and retries", async () => {
    await dispatcher.stop(0);
    await setup(1_000);
    await addSentinel();
    // The first request is never answered (the server holds it until its connection closes), so
    // only the timeout ends that attempt. Every later request is answered at once and notes the
    // error the row recorded for the attempt before it.
    const errorsBefore: Array<string | null | undefined> = [];
    let first = true;
    rx.handle((_r, res) => {
      if (first) return void (first = false);
      errorsBefore.push(outbox.pending()[0]?.deliveryState.lastError);
      res.writeHead(200).end();
    });
    const { row } = await push("evt_slow");
    expect(row).toMatchObject({ status: "delivered", deliveryState: { lastError: null } });
    // Two attempts, unless the machine is so busy that an answered request, too, took over the
    // timeout: then that attempt is a timeout retried like the first (the rule, whatever the count).
    const { attempts } = row.deliveryState;
    expect(attempts).toBeGreaterThanOrEqual(2);
    // (A request the client gave up on before the server had read it is not among them.)
    expect(errorsBefore.length).toBeGreaterThanOrEqual(1);
    expect(errorsBefore.length).toBeLessThanOrEqual(attempts - 1);
    for (const e of errorsBefore) expect(e).toMatch(/^timeout: .*no answer within 1000 ms/);
    expect(sleep.waits).toEqual(LIMITS.retryWaitsMs.slice(0, attempts - 1));
  });

  it("acks a 2xx with a 2 MB response body (read to the clamp, rest discarded)", async () => {
    await addSentinel();
    rx.handle((_r, res) => res.writeHead(200).end(Buffer.alloc(2 * 1024 * 1024, 97)));
    const { row } = await push("evt_big");
    expect(row).toMatchObject({ status: "delivered", deliveryState: { attempts: 1 } });
  });

  it("sends nothing for an expired sentinel (dead sentinel_expired) or a removed one (sentinel_removed)", async () => {
    await addSentinel("snt_exp", undefined, { kind: "at", ms: clock.now() - 1 });
    sentinels.expired.add("snt_exp");
    const { row } = await push("evt_e", "snt_exp");
    expect(row).toMatchObject({ status: "dead", deadReason: "sentinel_expired", deliveryState: { attempts: 0 } });
    await addSentinel("snt_gone");
    sentinels.views.delete("snt_gone");
    const { row: gone } = await push("evt_g", "snt_gone");
    expect(gone).toMatchObject({ status: "dead", deadReason: "sentinel_removed" });
    expect(rx.seen).toHaveLength(0);
  });

  it("still delivers what a count-ended sentinel accepted before it ended", async () => {
    const secretRef = await vault.put("snt_c", SECRET);
    sentinels.add("snt_c", { kind: "webhook", url: `https://127.0.0.1:${rx.port}/h`, secretRef }, {
      kind: "count",
      n: 1,
    } as never);
    sentinels.expired.add("snt_c");
    const { row } = await push("evt_c", "snt_c");
    expect(row.status).toBe("delivered");
  });

  it("never signs with a secret that fails to decode (dead delivered_rejected, nothing sent), and a vanished secret ends the row as sentinel_removed", async () => {
    const bad = await vault.put("snt_bad", "whsec_not-base64!");
    sentinels.add("snt_bad", { kind: "webhook", url: `https://127.0.0.1:${rx.port}/h`, secretRef: bad });
    const { row } = await push("evt_b", "snt_bad");
    expect(row).toMatchObject({ status: "dead", deadReason: "delivered_rejected", deliveryState: { attempts: 0 } });
    sentinels.add("snt_nosecret", {
      kind: "webhook",
      url: `https://127.0.0.1:${rx.port}/h`,
      secretRef: "swsec_missing",
    });
    const { row: r2 } = await push("evt_n", "snt_nosecret");
    expect(r2).toMatchObject({ status: "dead", deadReason: "sentinel_removed" });
    expect(rx.seen).toHaveLength(0);
    expect(logger.lines.join("\n")).not.toContain("not-base64");
  });

  it("dual-signs for 10 minutes after a rotation (both secrets verify), then signs with the current one only", async () => {
    const prev = SECRET;
    const next = secretOf(6, 48);
    const prevRef = await vault.put("snt_rot", prev);
    const curRef = await vault.put("snt_rot", next);
    clock.set(Date.now() - 10 * 60_000 + 2_000);
    const rotatedAt = clock.now();
    sentinels.add("snt_rot", {
      kind: "webhook",
      url: `https://127.0.0.1:${rx.port}/h`,
      secretRef: curRef,
      prevSecretRef: prevRef,
      rotatedAt,
    });
    const verify = (secret: string, s: (typeof rx.seen)[number]) =>
      new Webhook(secret).verify(s.body.toString(), s.headers as Record<string, string>);
    clock.set(rotatedAt + 10 * 60_000 - 1);
    await push("evt_w1", "snt_rot");
    for (const s of rx.seen) {
      expect(String(s.headers["webhook-signature"]).split(" ")).toHaveLength(2);
      expect(verify(prev, s)).toBeTruthy();
      expect(verify(next, s)).toBeTruthy();
    }
    clock.advance(1);
    await push("evt_w2", "snt_rot");
    const after = rx.seen.at(-1)!;
    expect(String(after.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    expect(verify(next, after)).toBeTruthy();
    expect(() => verify(prev, after)).toThrow(/No matching signature/);
  });

  it("signs with the secrets current when the attempt gets its slot, not those when it started waiting", async () => {
    const first = SECRET;
    const second = secretOf(7, 48);
    const third = secretOf(8, 48);
    const hanging: Array<() => void> = [];
    rx.handle((_r, res) => hanging.push(() => res.writeHead(200).end()));
    await addSentinel("snt_rot");
    const enqueue = async (eventId: string) => {
      const b = buildEnvelope("snt_rot", { id: eventId, type: "t.o.a", subjects: ["s"] }, 0);
      const { row } = await outbox.add({ sentinelId: "snt_rot", eventId, body: b });
      dispatcher.enqueue(row.requestId);
      return row;
    };
    // Fill the callback's lane (16 attempts in flight), then queue one more behind it.
    for (let i = 0; i < 16; i++) await enqueue(`h${i}`);
    await waitFor(() => hanging.length >= 16, "16 requests held by the receiver");
    expect(hanging).toHaveLength(16);
    // Queued for the lane before enqueue returns (the semaphore queues synchronously).
    const waiting = await enqueue("late");
    // Two rotations while it waits: the first secret leaves the vault.
    for (const secret of [second, third]) {
      const ref = await vault.put("snt_rot", secret);
      let dropped: string | undefined;
      await sentinels.updateStoredTarget("snt_rot", (cur) => {
        dropped = cur.prevSecretRef as string | undefined;
        return { ...cur, secretRef: ref, prevSecretRef: cur.secretRef, rotatedAt: clock.now() };
      });
      await vault.remove([dropped]);
    }
    await waitFor(() => {
      hanging.splice(0).forEach((f) => f());
      return outbox.get(waiting.requestId)!.status !== "pending";
    }, "the late row to be delivered");
    await dispatcher.idle();
    expect(outbox.get(waiting.requestId)).toMatchObject({ status: "delivered" });
    const late = rx.seen.find((s) => s.headers["webhook-id"] === "late")!;
    expect(String(late.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    for (const secret of [second, third])
      expect(new Webhook(secret).verify(late.body.toString(), late.headers as Record<string, string>)).toBeTruthy();
    expect(() => new Webhook(first).verify(late.body.toString(), late.headers as Record<string, string>)).toThrow(
      /No matching signature/,
    );
  });

  it("keeps delivering to a fast callback while another callback hangs", async () => {
    const slow = await startReceiver();
    try {
      const hanging: Array<() => void> = [];
      slow.handle((_r, res) => hanging.push(() => res.writeHead(200).end()));
      const slowRef = await vault.put("snt_slow", SECRET);
      sentinels.add("snt_slow", { kind: "webhook", url: `https://localhost:${slow.port}/h`, secretRef: slowRef });
      await addSentinel("snt_fast");
      for (let i = 0; i < 40; i++) {
        const b = buildEnvelope("snt_slow", { id: `s${i}`, type: "t.o.a", subjects: ["s"] }, 0);
        dispatcher.enqueue((await outbox.add({ sentinelId: "snt_slow", eventId: `s${i}`, body: b })).row.requestId);
      }
      for (let i = 0; i < 20; i++) {
        const b = buildEnvelope("snt_fast", { id: `f${i}`, type: "t.o.a", subjects: ["s"] }, 0);
        dispatcher.enqueue((await outbox.add({ sentinelId: "snt_fast", eventId: `f${i}`, body: b })).row.requestId);
      }
      // Both: the fast rows delivered, and the slow lane full (its 16 requests reached the receiver,
      // which on a busy machine may take longer than the fast deliveries).
      await waitFor(
        () => outbox.rowsOf("snt_fast").every((r) => r.status === "delivered") && hanging.length >= 16,
        "the fast rows delivered and 16 slow requests held",
      );
      expect(outbox.rowsOf("snt_slow").every((r) => r.status === "pending")).toBe(true);
      expect(hanging.length).toBe(16);
      while (hanging.length < 40) {
        hanging.splice(0).forEach((f) => f());
        await new Promise((r) => setTimeout(r, 20));
        if (outbox.rowsOf("snt_slow").every((r) => r.status === "delivered")) break;
      }
      hanging.splice(0).forEach((f) => f());
      await dispatcher.idle();
      expect(outbox.rowsOf("snt_slow").every((r) => r.status === "delivered")).toBe(true);
    } finally {
      await slow.close();
    }
  });
});
