import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(32, 42).toString("base64")}`;

async function until<T>(fn: () => Promise<T | undefined> | T | undefined, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("webhook target end to end (real daemon, real HTTPS receiver)", () => {
  let rx: WebhookReceiver;
  let sentinelId: string;

  const json = async (path: string, init: RequestInit = {}) => {
    const res = await fx.daemon.fetch(path, {
      ...init,
      headers: { "content-type": "application/json", ...(init.headers ?? {}) },
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const spec = (url: string, secret = SECRET) => ({
    match: [{ subject: "ci:api*" }],
    until: { kind: "never" },
    provider: "agentpush",
    target: { kind: "webhook", url, secret },
  });
  const push = (events: unknown[]) =>
    json("/providers/agentpush/events", { method: "POST", body: JSON.stringify(events) });
  const rowsOf = async (id: string) =>
    (await json(`/sentinels/${id}`)).body.target.outbox.rows as Array<Record<string, any>>;

  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
  });
  afterAll(async () => {
    await rx?.close();
  });
  const fx = useDaemonProcess({ prefix: "svc-e2e-webhook-", config: LOOPBACK_CONFIG });

  it("creates a webhook sentinel after the challenge, keeping the secret only in the 0600 sidecar", async () => {
    const res = await json("/sentinels", { method: "POST", body: JSON.stringify(spec(rx.url)) });
    expect(res.status).toBe(201);
    sentinelId = res.body.id;
    expect(res.body.spec.target).toEqual({
      kind: "webhook",
      url: rx.listedUrl,
      hasSecret: true,
      secretRedacted: true,
      verification: { at: expect.any(String), cached: false },
      deliveryStatus: { active: true, lastError: null },
    });
    expect(rx.challenges).toBe(1);
    const raw = SECRET.slice(6);
    expect(await readFile(join(fx.home, "sentinels.json"), "utf8")).not.toContain(raw);
    expect(await readFile(join(fx.home, "sentinels.json"), "utf8")).toMatch(/"secretRef": "swsec_/);
    expect(await readFile(join(fx.home, "sentinels-secrets.json"), "utf8")).toContain(SECRET);
    expect((await stat(join(fx.home, "sentinels-secrets.json"))).mode & 0o777).toBe(0o600);
    const list = await json("/sentinels");
    expect(JSON.stringify(list.body)).not.toContain(raw);
    const cli = await runCli(["sentinel", "list", "--json"], { home: fx.home });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain("secretRedacted");
    expect(cli.stdout).not.toContain(raw);
  });

  it("refuses a callback that echoes the wrong challenge, storing nothing", async () => {
    rx.wrongEcho = true;
    try {
      const before = await readFile(join(fx.home, "sentinels-secrets.json"), "utf8");
      const res = await json("/sentinels", {
        method: "POST",
        body: JSON.stringify(spec(rx.url, `whsec_${Buffer.alloc(32, 7).toString("base64")}`)),
      });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe("challenge_failed");
      expect((await json("/sentinels")).body.sentinels).toHaveLength(1);
      expect(await readFile(join(fx.home, "sentinels-secrets.json"), "utf8")).toBe(before);
    } finally {
      rx.wrongEcho = false;
    }
  });

  it("delivers pushed events as signed POSTs the standardwebhooks package verifies, with stable ids and exact bytes", async () => {
    const events = Array.from({ length: 5 }, (_, i) => ({
      id: `evt_e2e_${i}`,
      type: "ci.build.finished",
      subjects: ["ci:api", `ci:api#${i}`],
      data: { n: i },
    }));
    expect((await push(events)).status).toBe(200);
    await until(() => rx.deliveries.length >= 5);
    expect(rx.unverified).toHaveLength(0);
    expect(rx.deliveries.map((x) => x.id).sort()).toEqual(events.map((e) => e.id).sort());
    for (const x of rx.deliveries) {
      expect(x.subscriptionId).toBe(sentinelId);
      expect(x.id).not.toContain(".");
      expect(JSON.parse(x.body)).toMatchObject({
        id: x.id,
        type: "ci.build.finished",
        sentinelId,
        subjects: ["ci:api", expect.any(String)],
      });
    }
    const rows = await until(async () => {
      const r = await rowsOf(sentinelId);
      return r.length === 5 && r.every((row) => row.status === "delivered") ? r : undefined;
    });
    expect(rows[0]).toMatchObject({ attempts: 1, lastError: null });
    expect((await push(events.slice(0, 1))).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(rx.deliveries.filter((x) => x.id === "evt_e2e_0")).toHaveLength(1);
  });

  it("records retries and terminal rejections in the row; `svc sentinel status` shows them", async () => {
    rx.respond = (x, res) => res.writeHead(x.id === "evt_gone" ? 410 : 200).end();
    expect((await push([{ id: "evt_gone", type: "ci.build.finished", subjects: ["ci:api"] }])).status).toBe(200);
    const row = await until(async () =>
      (await rowsOf(sentinelId)).find((r) => r.eventId === "evt_gone" && r.status === "dead"),
    );
    expect(row).toMatchObject({ deadReason: "delivered_rejected", attempts: 1 });
    expect(row.lastError).toBe(`127.0.0.1:${rx.port} answered HTTP 410 (terminal, not retried)`);
    const cli = await runCli(["sentinel", "status", sentinelId, "--json"], { home: fx.home });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain("delivered_rejected");
    rx.respond = (_x, res) => res.writeHead(200).end();
  });

  it("rotates the secret from the CLI: printed once, challenge-verified, both secrets sign during the window", async () => {
    const challengesBefore = rx.challenges;
    const cli = await runCli(["sentinel", "rotate-secret", sentinelId], { home: fx.home });
    expect(cli.code, cli.stderr).toBe(0);
    const fresh = cli.stdout.split("\n").find((l) => l.startsWith("whsec_"))!;
    expect(fresh).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rx.challenges).toBe(challengesBefore + 1);
    rx.secrets.push(fresh);
    expect(await readFile(join(fx.home, "sentinels.json"), "utf8")).not.toContain(fresh.slice(6));
    expect((await json(`/sentinels/${sentinelId}`)).body.spec.target).toMatchObject({
      kind: "webhook",
      url: rx.listedUrl,
      hasSecret: true,
      secretRedacted: true,
      deliveryStatus: { active: true },
    });
    expect(Object.keys((await json(`/sentinels/${sentinelId}`)).body.spec.target).sort()).toEqual([
      "deliveryStatus",
      "hasSecret",
      "kind",
      "secretRedacted",
      "url",
      "verification",
    ]);
    expect((await push([{ id: "evt_rot", type: "ci.build.finished", subjects: ["ci:api"] }])).status).toBe(200);
    const x = await until(() => rx.deliveries.find((r) => r.id === "evt_rot"));
    expect(x.signatures).toBe(2);
    expect(x.verifiedBy.sort()).toEqual([0, 1]);
    const onArgv = await runCli(["sentinel", "rotate-secret", sentinelId, "--secret", fresh], { home: fx.home });
    expect(onArgv.code).toBe(2);
    expect(onArgv.stderr).toContain("--secret takes no value");
    expect(onArgv.stdout + onArgv.stderr).not.toContain(fresh.slice(6));
    const again = await runCli(["sentinel", "rotate-secret", sentinelId, "--secret-env", "NEW_SECRET", "--json"], {
      home: fx.home,
      env: { NEW_SECRET: fresh },
    });
    expect(JSON.parse(again.stdout)).toEqual({ sentinelId, rotated: false });
    const third = `whsec_${Buffer.alloc(64, 77).toString("base64")}`;
    const fromStdin = await runCli(["sentinel", "rotate-secret", sentinelId, "--secret", "-", "--json"], {
      home: fx.home,
      input: `${third}\n`,
    });
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(JSON.parse(fromStdin.stdout)).toMatchObject({ sentinelId, rotated: true });
    expect(fromStdin.stdout).not.toContain(third.slice(6));
    rx.secrets.push(third);
    const bad = await runCli(["sentinel", "rotate-secret", sentinelId, "--secret"], {
      home: fx.home,
      input: "whsec_tooshort\n",
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/malformed/);
    expect(bad.stderr).not.toContain("tooshort");
  });

  it("ends a row whose sentinel expires (until: at) between retries as dead sentinel_expired, without sending again", async () => {
    // Held still rather than raced: the receiver answers no attempt (503) before the sentinel's
    // end has passed, so however slow the machine, the retry after it finds the sentinel expired.
    // The push only has to land before the end, a margin of seconds for two local requests.
    const endsAt = Date.now() + 6_000;
    const res = await json("/sentinels", {
      method: "POST",
      body: JSON.stringify({ ...spec(rx.url), match: [{ subject: "exp:*" }], until: { kind: "at", ms: endsAt } }),
    });
    expect(res.status).toBe(201);
    const id = res.body.id as string;
    rx.respond = (_x, r) => {
      setTimeout(() => r.writeHead(503).end(), Math.max(0, endsAt + 50 - Date.now()));
    };
    try {
      expect((await push([{ id: "evt_exp", type: "exp.thing.done", subjects: ["exp:1"] }])).status).toBe(200);
      expect(Date.now(), "the push landed before the sentinel's end").toBeLessThan(endsAt);
      const row = await until(async () => (await rowsOf(id)).find((r) => r.status === "dead"));
      expect(row).toMatchObject({ eventId: "evt_exp", deadReason: "sentinel_expired" });
      expect(row.attempts).toBeLessThan(5);
      expect(rx.deliveries.filter((x) => x.id === "evt_exp")).toHaveLength(row.attempts);
    } finally {
      rx.respond = (_x, r) => r.writeHead(200).end();
      await json(`/sentinels/${id}`, { method: "DELETE" });
    }
  });

  it("delivers the events a count-limited sentinel accepted before it ended (until: count)", async () => {
    const res = await json("/sentinels", {
      method: "POST",
      body: JSON.stringify({ ...spec(rx.url), match: [{ subject: "cnt:*" }], until: { kind: "count", n: 2 } }),
    });
    expect(res.status).toBe(201);
    const id = res.body.id as string;
    for (const n of [1, 2, 3]) await push([{ id: `evt_cnt_${n}`, type: "cnt.thing.done", subjects: ["cnt:1"] }]);
    const rows = await until(async () => {
      const r = await rowsOf(id);
      return r.length === 2 && r.every((row) => row.status === "delivered") ? r : undefined;
    });
    expect(rows.map((r) => r.eventId).sort()).toEqual(["evt_cnt_1", "evt_cnt_2"]);
    expect(rx.deliveries.some((x) => x.id === "evt_cnt_3")).toBe(false);
    expect((await json(`/sentinels/${id}`)).body.status).toBe("expired");
    await json(`/sentinels/${id}`, { method: "DELETE" });
  });

  it("streams no secret on /events", async () => {
    const ac = new AbortController();
    const res = await fx.daemon.fetch("/events", { headers: { "last-event-id": "0" }, signal: ac.signal });
    const reader = res.body!.getReader();
    let text = "";
    const stop = setTimeout(() => ac.abort(), 400);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += Buffer.from(value).toString("utf8");
      }
    } catch {
      // aborted
    } finally {
      clearTimeout(stop);
    }
    expect(text).toContain("sentinel:");
    for (const s of rx.secrets) expect(text).not.toContain(s.slice(6));
  });

  it("removing the sentinel removes its secrets; no secret ever reached the daemon's log", async () => {
    expect((await json(`/sentinels/${sentinelId}`, { method: "DELETE" })).status).toBe(200);
    expect(JSON.parse(await readFile(join(fx.home, "sentinels-secrets.json"), "utf8")).secrets).toEqual({});
    for (const s of rx.secrets) expect(fx.daemon.logs()).not.toContain(s.slice(6));
    expect(fx.daemon.logs()).not.toContain("private-query");
  });

  it("warned once, at start, that webhooks.allowSubnets exempts loopback from the SSRF gate", () => {
    expect(
      fx.daemon.logs().match(/webhooks\.allowSubnets is set: callbacks in 127\.0\.0\.0\/8, ::1\/128/g),
    ).toHaveLength(1);
  });
});
