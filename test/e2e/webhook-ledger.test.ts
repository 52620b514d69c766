import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useDaemonProcess } from "../support/cli.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;

async function until<T>(fn: () => Promise<T | undefined> | T | undefined, what: string): Promise<T> {
  // A condition, not a deadline of wall time: the suite's own timeout bounds it.
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("the outbox row is the webhook target's only record of an event (real daemon)", () => {
  let rx: WebhookReceiver;
  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
  });
  afterAll(async () => {
    await rx?.close();
  });
  const fx = useDaemonProcess({ prefix: "svc-e2e-ledger-", config: LOOPBACK_CONFIG });
  const json = async (path: string, init: RequestInit = {}) => {
    const res = await fx.daemon.fetch(path, {
      ...init,
      headers: { "content-type": "application/json", ...(init.headers ?? {}) },
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const push = (events: unknown[]) =>
    json("/providers/agentpush/events", { method: "POST", body: JSON.stringify(events) });
  const ev = (id: string) => ({ id, type: "ci.build.finished", subjects: ["ci:ledger"], data: {} });

  it("an id re-pushed after 1,000 newer ones is still a duplicate while its row exists: nothing sent, nothing counted", {
    timeout: 120_000,
  }, async () => {
    const created = await json("/sentinels", {
      method: "POST",
      body: JSON.stringify({
        match: [{ subject: "ci:ledger" }],
        until: { kind: "count", n: 1012 },
        provider: "agentpush",
        target: { kind: "webhook", url: rx.url, secret: SECRET },
      }),
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    for (let start = 0; start < 1010; start += 202) {
      const r = await push(Array.from({ length: 202 }, (_, i) => ev(`w${start + i}`)));
      expect(r.status).toBe(200);
      expect(r.body.matched.every((m: { outcome: string }) => m.outcome === "delivered")).toBe(true);
    }
    await until(
      async () => (await json(`/sentinels/${id}`)).body.target.outbox.delivered === 1010 || undefined,
      "1010 rows delivered",
    );
    // A restart: every acknowledgement is written, and whatever was in memory only is gone.
    await fx.start();
    const again = await push([ev("w0"), ev("w1")]);
    expect(again.body.matched.map((m: { outcome: string }) => m.outcome)).toEqual(["duplicate", "duplicate"]);
    const status = (await json(`/sentinels/${id}`)).body;
    expect(status.status).toBe("active");
    expect(status.deliveredCount).toBe(1010);
    // Two more new ids reach the count exactly.
    const last = await push([ev("w1010"), ev("w1011")]);
    expect(last.body.matched.map((m: { outcome: string }) => m.outcome)).toEqual(["delivered", "delivered"]);
    await until(async () => (await json(`/sentinels/${id}`)).body.status === "expired" || undefined, "expiry by count");
    await until(() => rx.deliveries.length >= 1012, "1012 deliveries");
    expect(new Set(rx.deliveries.map((d) => d.id)).size).toBe(1012);
    // The engine kept no record of its own for this webhook sentinel.
    expect(await readdir(join(fx.home, "sentinels-dedup")).catch(() => [])).not.toContainEqual(
      expect.stringContaining(id),
    );
  });

  it("a webhook sentinel's dedup record from before 0.21 is adopted by the outbox: its ids stay duplicates, its count carries on", async () => {
    const created = await json("/sentinels", {
      method: "POST",
      body: JSON.stringify({
        match: [{ subject: "ci:old" }],
        until: { kind: "count", n: 1102 },
        provider: "agentpush",
        target: { kind: "webhook", url: rx.url, secret: SECRET },
      }),
    });
    const id = created.body.id as string;
    await fx.daemon.stop();
    // What svc 0.20 left: a snapshot of 1,100 deliveries, the last 1000 ids seen.
    const seen = Array.from({ length: 1000 }, (_, i) => `old${100 + i}`);
    await mkdir(join(fx.home, "sentinels-dedup"), { recursive: true });
    await writeFile(
      join(fx.home, "sentinels-dedup", `${id}.json`),
      JSON.stringify({ seq: 2200, seen, inflight: [], delivered: 1100 }),
    );
    await fx.start();
    const before = rx.deliveries.length;
    const pushed = await push([{ id: "old500", type: "ci.build.finished", subjects: ["ci:old"], data: {} }]);
    expect(pushed.body.matched.map((m: { outcome: string }) => m.outcome)).toEqual(["duplicate"]);
    expect((await json(`/sentinels/${id}`)).body).toMatchObject({ status: "active", deliveredCount: 1100 });
    expect(await readdir(join(fx.home, "sentinels-dedup"))).not.toContainEqual(expect.stringContaining(id));
    const fresh = await push([
      { id: "new1", type: "ci.build.finished", subjects: ["ci:old"], data: {} },
      { id: "new2", type: "ci.build.finished", subjects: ["ci:old"], data: {} },
    ]);
    expect(fresh.body.matched.map((m: { outcome: string }) => m.outcome)).toEqual(["delivered", "delivered"]);
    await until(
      async () => (await json(`/sentinels/${id}`)).body.status === "expired" || undefined,
      "expiry by count at 1102",
    );
    await until(() => rx.deliveries.length >= before + 2, "2 deliveries");
  });
});
