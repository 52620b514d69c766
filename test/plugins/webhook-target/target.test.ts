import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHostEgress, type HostEgress } from "../../../core/egress/host-egress.js";
import { FakeClock } from "../../../core/runtime/clock.js";
import webhookTarget from "../../../plugins/webhook-target/index.js";
import { createChallengeVerifier } from "../../../plugins/webhook-target/challenge.js";
import { rotateSecret } from "../../../plugins/webhook-target/rotation.js";
import { signWithKey } from "../../../plugins/webhook-target/signer.js";
import { createWebhookTarget, type WebhookTarget } from "../../../plugins/webhook-target/target.js";
import { OUTBOX_FILES } from "../../../plugins/webhook-target/outbox/persistence.js";
import { parseJournal } from "../../../plugins/webhook-target/outbox/journal.js";
import { VAULT_FILE } from "../../../plugins/webhook-target/vault.js";
import { makeTempHome } from "../../support/cli.js";
import {
  LOOPBACK_ALLOWED,
  echoChallenge,
  fakeSentinels,
  recordingSleep,
  secretOf,
  startReceiver,
  testContext,
  type FakeSentinels,
  type Receiver,
} from "./support/harness.js";

const SECRET = secretOf(11);

describe("webhook target plugin", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  let rx: Receiver;
  let sentinels: FakeSentinels;
  let clock: FakeClock;
  let targets: WebhookTarget[];
  let url: string;
  let egress: HostEgress;

  const makeTarget = () => {
    const { ctx, logger } = testContext(home, sentinels, { clock, sleep: recordingSleep(), egress });
    const verifier = createChallengeVerifier({
      egress: ctx.service("egress"),
      clock,
      random: ctx.random,
      sign: signWithKey,
    });
    const target = createWebhookTarget(ctx, { verifier, tickMs: 0 });
    targets.push(target);
    return { target, logger, verifier, ctx };
  };
  const createSentinel = async (target: WebhookTarget, id = "snt_1", secret = SECRET) => {
    const stored = await target.create({ kind: "webhook", url, secret }, { sentinelId: id, principal: "token:boot" });
    sentinels.add(id, stored);
    return stored;
  };

  beforeEach(async () => {
    ({ home, cleanup } = await makeTempHome("svc-whtarget-"));
    rx = await startReceiver();
    rx.handle(echoChallenge());
    url = `https://127.0.0.1:${rx.port}/cb/path?k=v`;
    sentinels = fakeSentinels();
    clock = new FakeClock(Date.now());
    targets = [];
    egress = createHostEgress({ allowSubnets: () => LOOPBACK_ALLOWED });
  });
  afterEach(async () => {
    for (const t of targets) await t.stop?.();
    await egress.close();
    await rx.close();
    await cleanup();
  });

  it("creates: challenge-verifies with the candidate secret, moves it to the 0600 vault, stores only a ref, projects it redacted", async () => {
    const { target } = makeTarget();
    const stored = await createSentinel(target);
    expect(stored).toEqual({
      kind: "webhook",
      url,
      secretRef: expect.stringMatching(/^swsec_/),
      verification: { at: expect.any(Number), cached: false },
    });
    expect(JSON.stringify(stored)).not.toContain(SECRET.slice(6));
    expect(rx.seen).toHaveLength(1);
    expect(rx.seen[0]!.headers["x-mcp-subscription-id"]).toBe("snt_1");
    expect(
      new Webhook(SECRET).verify(rx.seen[0]!.body.toString(), rx.seen[0]!.headers as Record<string, string>),
    ).toMatchObject({ type: "verification" });
    expect((await stat(join(home, VAULT_FILE))).mode & 0o777).toBe(0o600);
    expect(await target.vault.get(stored.secretRef as string)).toBe(SECRET);
    expect(target.project(stored, { sentinelId: "snt_1" })).toEqual({
      kind: "webhook",
      url,
      hasSecret: true,
      secretRedacted: true,
      verification: { at: expect.any(String), cached: false },
      deliveryStatus: { active: true, lastError: null },
    });
  });

  it.each<[string, { secret: string; handler: string; url?: string }, string]>([
    ["a wrong challenge echo", { secret: SECRET, handler: "wrong" }, "challenge_failed"],
    ["a non-2xx answer", { secret: SECRET, handler: "500" }, "non_2xx"],
    ["a malformed secret", { secret: "whsec_AAAA", handler: "echo" }, "challenge_failed"],
    ["an http URL", { secret: SECRET, handler: "echo", url: "http://127.0.0.1/x" }, "non_https"],
  ])("refuses creation on %s and stores nothing", async (_name, c, code) => {
    const { target } = makeTarget();
    if (c.handler === "wrong")
      rx.handle((_r, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"challenge":"nope"}'));
    if (c.handler === "500") rx.handle((_r, res) => res.writeHead(500).end());
    const err = await target
      .create({ kind: "webhook", url: c.url ?? url, secret: c.secret }, { sentinelId: "snt_x", principal: "loopback" })
      .catch((e) => e);
    expect(err).toMatchObject({ code });
    expect(err.message).not.toContain(c.secret.slice(6));
    await expect(stat(join(home, VAULT_FILE))).rejects.toThrow(/ENOENT/);
    if (c.secret === "whsec_AAAA" || c.url) expect(rx.seen).toHaveLength(0);
  });

  it("accepts deliveries durably (deferred), dedups, delivers, reports status, and marks seen only when terminal", async () => {
    const { target } = makeTarget();
    await createSentinel(target);
    const view = sentinels.get("snt_1")!;
    const event = { id: "evt_1", type: "t.o.a", subjects: ["s:1"], data: { a: 1 } };
    expect(await target.deliver({ sentinel: view, event })).toEqual({ ack: "deferred" });
    expect(await target.deliver({ sentinel: view, event })).toEqual({ ack: "deferred" });
    await target.idle();
    const deliveries = rx.seen.filter((s) => s.headers["webhook-id"] === "evt_1");
    expect(deliveries).toHaveLength(1);
    expect(sentinels.seen).toEqual([["snt_1", "evt_1"]]);
    const status = await target.status!(view);
    expect(status).toMatchObject({
      outbox: {
        pending: 0,
        delivered: 1,
        dead: 0,
        rows: [{ eventId: "evt_1", status: "delivered", attempts: 1, lastError: null }],
      },
    });
    expect(JSON.stringify(status)).not.toContain(SECRET.slice(6));
    await expect(target.deliver({ sentinel: view, event: { ...event, id: "evt.dot" } })).rejects.toThrow(
      /contains "."/,
    );
  });

  it("deliverMany: adds the rows in order, each durable when its result is fulfilled; refuses a bad id alone; keeps one row per event", async () => {
    const { target } = makeTarget();
    await createSentinel(target);
    const hang: Array<() => void> = [];
    rx.handle(echoChallenge((_r, res) => hang.push(() => res.writeHead(200).end())));
    const view = sentinels.get("snt_1")!;
    const event = (id: string) => ({ id, type: "t.o.a", subjects: ["s"] });
    await target.deliver({ sentinel: view, event: event("evt_0") });
    const results = await target.deliverMany!(
      ["evt_a", "evt.dot", "evt_b", "evt_0", "evt_c"].map((id) => ({ sentinel: view, event: event(id) })),
    );
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled"]);
    expect(results[0]).toEqual({ status: "fulfilled", value: { ack: "deferred" } });
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/contains "."/);
    const journal = parseJournal(await readFile(join(home, OUTBOX_FILES.journal), "utf8")).records as any[];
    expect(journal.filter((r) => r.op === "add").map((r) => r.row.eventId)).toEqual([
      "evt_0",
      "evt_a",
      "evt_b",
      "evt_c",
    ]);
    const ob = await target.outbox();
    expect(ob.rowsOf("snt_1").map((r) => [r.eventId, r.status])).toEqual(
      ["evt_0", "evt_a", "evt_b", "evt_c"].map((id) => [id, "pending"]),
    );
    while (hang.length < 4) await new Promise((r) => setTimeout(r, 5));
    hang.forEach((f) => f());
    await target.idle();
    expect(
      rx.seen
        .filter((s) => s.headers["webhook-id"]?.toString().startsWith("evt_"))
        .map((s) => s.headers["webhook-id"])
        .sort(),
    ).toEqual(["evt_0", "evt_a", "evt_b", "evt_c"]);
  });

  it("on removal moves pending rows to dead sentinel_removed and deletes the sentinel's secrets", async () => {
    const { target } = makeTarget();
    const stored = await createSentinel(target);
    const hang: Array<() => void> = [];
    rx.handle(echoChallenge((_r, res) => hang.push(() => res.writeHead(200).end())));
    const view = sentinels.get("snt_1")!;
    await target.deliver({ sentinel: view, event: { id: "evt_p", type: "t.o.a", subjects: ["s"] } });
    await target.removed!(view);
    sentinels.views.delete("snt_1");
    expect(await target.vault.get(stored.secretRef as string)).toBeUndefined();
    expect(JSON.parse(await readFile(join(home, VAULT_FILE), "utf8")).secrets).toEqual({});
    const ob = await target.outbox();
    expect(ob.rowsOf("snt_1")[0]).toMatchObject({ status: "dead", deadReason: "sentinel_removed" });
    hang.forEach((f) => f());
    await target.idle();
    expect(ob.rowsOf("snt_1")[0]).toMatchObject({ status: "dead", deadReason: "sentinel_removed" });
  });

  it("at start removes the secrets no sentinel references (an interrupted create, rotation or removal), keeping current, previous and new ones", async () => {
    const first = makeTarget().target;
    const kept = await createSentinel(first);
    const orphanOfCreate = await first.vault.put("snt_never_stored", secretOf(12));
    const orphanOfRotation = await first.vault.put("snt_1", secretOf(13));
    const previous = await first.vault.put("snt_1", secretOf(14));
    sentinels.add("snt_1", { ...kept, prevSecretRef: previous, rotatedAt: clock.now() });
    await first.stop!();

    clock.advance(1_000);
    const { target, logger } = makeTarget();
    const inProgress = await target.vault.put("snt_being_created", secretOf(15));
    await target.start!();
    const refs = Object.keys(JSON.parse(await readFile(join(home, VAULT_FILE), "utf8")).secrets).sort();
    expect(refs).toEqual([kept.secretRef, previous, inProgress].sort());
    expect(await target.vault.get(orphanOfCreate)).toBeUndefined();
    expect(await target.vault.get(orphanOfRotation)).toBeUndefined();
    expect(logger.lines.join("\n")).toContain(`"removed":2`);
    expect(logger.lines.join("\n")).not.toContain(secretOf(12).slice(6));
  });

  it("starts with an unreadable vault (the look for unreferenced secrets is logged, never quoting the file)", async () => {
    await writeFile(join(home, VAULT_FILE), `{"version":1,"secrets":{"swsec_x":{"secret":"${secretOf(16)}"`, {
      mode: 0o600,
    });
    const { target, logger } = makeTarget();
    await target.start!();
    const log = logger.lines.join("\n");
    expect(log).toContain("could not look for unreferenced webhook secrets");
    expect(log).not.toContain(secretOf(16).slice(6));
  });

  it("resumes pending rows at startup with their exact stored bytes (no re-serialization)", async () => {
    const first = makeTarget().target;
    await createSentinel(first);
    await first.stop!();
    const { Outbox } = await import("../../../plugins/webhook-target/outbox/outbox.js");
    const { createMemoryLogger } = await import("../../../core/runtime/logger.js");
    const ob = await Outbox.open({
      home,
      now: () => clock.now(),
      newId: () => "req_01KRESUMED",
      logger: createMemoryLogger(),
    });
    const stored = Buffer.from('{"id":"evt_s",  "type":"t.o.a", "subjects":["s"], "data":{"z":1,"a":2}}');
    await ob.add({ sentinelId: "snt_1", eventId: "evt_s", body: stored });
    await ob.close();
    const second = makeTarget().target;
    await second.start!();
    await second.idle();
    const seen = rx.seen.filter((s) => s.headers["webhook-id"] === "evt_s");
    expect(seen).toHaveLength(1);
    expect(seen[0]!.body.equals(stored)).toBe(true);
    expect(
      new Webhook(SECRET).verify(seen[0]!.body.toString(), seen[0]!.headers as Record<string, string>),
    ).toBeTruthy();
    expect((await second.outbox()).get("req_01KRESUMED")).toMatchObject({ status: "delivered", seen: true });
    expect(sentinels.seen).toContainEqual(["snt_1", "evt_s"]);
  });

  it("rotates: verifies the new secret first, keeps the previous for the window, does not restamp the same secret, prints a generated one once", async () => {
    const { target, verifier, ctx } = makeTarget();
    const stored = await createSentinel(target);
    const deps = { sentinels, vault: target.vault, verifier, clock, random: ctx.random };
    const next = secretOf(12);
    rx.handle((_r, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"challenge":"wrong"}'));
    await expect(
      rotateSecret(deps, { sentinelId: "snt_1", secret: next, principal: "token:boot" }),
    ).rejects.toMatchObject({ code: "challenge_failed" });
    expect(sentinels.get("snt_1")!.spec.target.secretRef).toBe(stored.secretRef);
    rx.handle(echoChallenge());
    const r1 = await rotateSecret(deps, { sentinelId: "snt_1", secret: next, principal: "token:boot" });
    expect(r1).toEqual({
      sentinelId: "snt_1",
      rotated: true,
      rotatedAt: clock.now(),
      dualSignUntil: clock.now() + 600_000,
    });
    const t1 = sentinels.get("snt_1")!.spec.target;
    expect(t1).toMatchObject({ prevSecretRef: stored.secretRef, rotatedAt: clock.now() });
    expect(await target.vault.get(t1.secretRef as string)).toBe(next);
    clock.advance(5_000);
    expect(await rotateSecret(deps, { sentinelId: "snt_1", secret: next, principal: "token:boot" })).toEqual({
      sentinelId: "snt_1",
      rotated: false,
    });
    expect(sentinels.get("snt_1")!.spec.target.rotatedAt).toBe(r1.rotatedAt);
    const r2 = await rotateSecret(deps, { sentinelId: "snt_1", principal: "token:boot" });
    expect(r2.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(await target.vault.get(stored.secretRef as string)).toBeUndefined();
    await expect(
      rotateSecret(deps, { sentinelId: "snt_1", secret: "whsec_bad", principal: "x" }),
    ).rejects.toMatchObject({ code: "invalid_input" });
    await expect(rotateSecret(deps, { sentinelId: "snt_nope", principal: "x" })).rejects.toMatchObject({
      code: "not_found",
    });
    expect(JSON.stringify(sentinels.get("snt_1"))).not.toContain(next.slice(6));
  });

  it("the plugin's setup posts through the host's \"egress\" service, and fails clearly without it", async () => {
    const posted: string[] = [];
    const counting = {
      post: (u: string, init: Parameters<HostEgress["post"]>[1]) => (
        posted.push(new URL(u).host), egress.post(u, init)
      ),
      close: async () => undefined,
    };
    const { ctx } = testContext(home, sentinels, { clock, egress: counting });
    const target = (await webhookTarget.setup(ctx)) as WebhookTarget;
    targets.push(target);
    await createSentinel(target);
    const view = sentinels.get("snt_1")!;
    await target.deliver({ sentinel: view, event: { id: "evt_e", type: "t.o.a", subjects: ["s:1"] } });
    await target.idle();
    expect(posted).toEqual([`127.0.0.1:${rx.port}`, `127.0.0.1:${rx.port}`]);
    await target.stop!();
    expect((await egress.post(url, { headers: {}, body: "{}", timeoutMs: 5_000 })).status).toBe(200);
    const bare = testContext(home, sentinels, { clock }).ctx;
    expect(() => webhookTarget.setup(bare)).toThrow(/egress/);
  });
});
