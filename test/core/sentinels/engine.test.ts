import { DELIVERY_CONCURRENCY } from "../../../core/sentinels/ingest.js";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SvcError } from "../../../core/errors.js";
import { SentinelDedup } from "../../../core/sentinels/dedup.js";
import { makeTempHome } from "../../support/cli.js";
import { ev, spec, startHarness, type Harness } from "./harness.js";

let home: string;
let cleanup: () => Promise<void>;
let h: Harness;

beforeEach(async () => {
  ({ home, cleanup } = await makeTempHome("svc-sentinel-engine-"));
  h = await startHarness(home);
});
afterEach(async () => {
  await h.stop();
  await cleanup();
});

const _endedLines = (logs: string[]) =>
  logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "sentinel ended:expired");

describe("sentinel engine: create, list, status, remove", () => {
  it("creates a sentinel through the target plugin, stores it and projects it", async () => {
    const p = await h.engine.create(spec("repo:a", { label: "mine", group: "g" }), "token:boot");
    expect(p.id).toMatch(/^snt_[0-9A-Z]{26}$/);
    expect(p.id).not.toContain(".");
    expect(p).toMatchObject({
      status: "active",
      deliveredCount: 0,
      spec: { provider: "agentpush", label: "mine", group: "g", target: { kind: "test", name: "t1" } },
    });
    expect(h.rec.hooks).toContain(`create:${p.id}:token:boot`);
    const file = JSON.parse(await readFile(join(home, "sentinels.json"), "utf8"));
    expect(file.sentinels.map((s: { id: string }) => s.id)).toEqual([p.id]);
    expect((await h.engine.list()).map((s) => s.id)).toEqual([p.id]);
    expect(await h.engine.status(p.id)).toMatchObject({ id: p.id, target: { rows: 0 } });
  });

  it("shows targets only through their projection (a secret input never reaches a listing)", async () => {
    const p = await h.engine.create(
      spec("repo:a", { target: { kind: "test", name: "t1", secret: "whsec_hidden" } }),
      "loopback",
    );
    const all = JSON.stringify([p, await h.engine.list(), await h.engine.status(p.id)]);
    expect(all).not.toContain("whsec_hidden");
    expect(all).not.toContain("ref_1");
    expect(p.spec.target).toEqual({ kind: "test", name: "t1", hasSecret: true });
  });

  it("stores nothing when the target refuses, and refuses routine targets with not_implemented", async () => {
    await expect(h.engine.create(spec("a", { target: { kind: "test", name: "refuse" } }), "loopback")).rejects.toThrow(
      "refused by target",
    );
    const err = await h.engine
      .create(spec("a", { target: { kind: "routine", routineId: "r1" } }), "loopback")
      .catch((e) => e);
    expect(SvcError.is(err) && err.code).toBe("not_implemented");
    expect(await h.engine.list()).toEqual([]);
  });

  it("removes: target and provider hooks run, the record and its dedup file go, not_found afterwards", async () => {
    const p = await h.engine.create(spec("github:acme/api#1", { provider: "local-gh" }), "loopback");
    await h.engine.ingest("local-gh", [
      ev("e1", ["github:acme/api", "github:acme/api#1"], "github.pull_request.opened"),
    ]);
    await h.engine.remove(p.id);
    expect(h.rec.hooks).toEqual(expect.arrayContaining([`watch:${p.id}`, `unwatch:${p.id}`, `removed:${p.id}`]));
    expect(await readdir(join(home, "sentinels-dedup"))).toEqual([]);
    await expect(h.engine.remove(p.id)).rejects.toMatchObject({ code: "not_found" });
    await expect(h.engine.status(p.id)).rejects.toMatchObject({ code: "not_found" });
    const r = await h.engine.ingest("local-gh", [ev("e2", ["github:acme/api#1"], "github.pull_request.edited")]);
    expect(r.matched).toEqual([]);
  });

  it("reports provider readiness and passes setup input to the provider", async () => {
    const reports = await h.engine.providers();
    expect(reports.find((r) => r.kind === "local-gh")?.readiness).toEqual({
      ready: false,
      detail: "gh is not on PATH",
    });
    expect(reports.find((r) => r.kind === "agentpush")?.readiness.ready).toBe(true);
    expect(await h.engine.setupProvider("local-gh", { token: "x" })).toEqual({ configured: ["token"] });
    await expect(h.engine.setupProvider("agentpush", {})).rejects.toMatchObject({ code: "invalid_input" });
    await expect(h.engine.setupProvider("nope", {})).rejects.toMatchObject({ code: "not_found" });
    expect(await h.engine.pollNow()).toEqual({ polled: ["local-gh"] });
    expect(h.rec.polls).toBe(1);
  });

  it("updateStoredTarget replaces the stored target under the lock and keeps its kind", async () => {
    const p = await h.engine.create(spec("a"), "loopback");
    const view = await h.engine.updateStoredTarget(p.id, (t) => ({ ...t, name: "t2", kind: "other" }));
    expect(view.spec.target).toEqual({ kind: "test", name: "t2" });
    const file = JSON.parse(await readFile(join(home, "sentinels.json"), "utf8"));
    expect(file.sentinels[0].spec.target).toEqual({ kind: "test", name: "t2" });
  });
});

describe("sentinel engine: matching and delivery", () => {
  it("delivers matched events only to the sentinels whose clauses match, OR over clauses", async () => {
    const a = await h.engine.create(spec(["repo:a", "repo:z"]), "loopback");
    const b = await h.engine.create(spec("repo:*"), "loopback");
    const c = await h.engine.create(
      spec("repo:a", { match: [{ subject: "repo:a", types: ["deploy.*"] }] }),
      "loopback",
    );
    const r = await h.engine.ingest("agentpush", [
      ev("e1", ["repo:a"]),
      ev("e2", ["repo:z"], "deploy.done"),
      ev("e3", ["other"]),
    ]);
    const got = h.rec.delivered
      .map((d) => `${d.sentinelId === a.id ? "a" : d.sentinelId === b.id ? "b" : "c"}:${d.event.id}`)
      .sort();
    expect(got).toEqual(["a:e1", "a:e2", "b:e1", "b:e2"]);
    expect(r.accepted).toBe(3);
    expect(r.matched.every((m) => m.outcome === "delivered")).toBe(true);
    await h.engine.ingest("agentpush", [ev("e4", ["repo:a"], "deploy.started")]);
    expect(h.rec.delivered.filter((d) => d.sentinelId === c.id).map((d) => d.event.id)).toEqual(["e4"]);
  });

  it("uses the provider's defaultTypes when a clause has no types, and matches only its own provider's events", async () => {
    const p = await h.engine.create(spec("github:acme/api#7", { provider: undefined }), "loopback");
    expect(p.spec.provider).toBe("local-gh");
    await h.engine.ingest("local-gh", [
      ev("e1", ["github:acme/api", "github:acme/api#7"], "github.pull_request.synchronize"),
      ev("e2", ["github:acme/api", "github:acme/api#7"], "github.push"),
    ]);
    await h.engine.ingest("agentpush", [ev("e3", ["github:acme/api#7"], "github.pull_request.opened")]);
    expect(h.rec.delivered.map((d) => d.event.id)).toEqual(["e1"]);
  });

  it("never delivers a duplicate: within a batch, across pushes, concurrently and after a restart", async () => {
    const p = await h.engine.create(spec("s"), "loopback");
    await h.engine.ingest("agentpush", [ev("e1", ["s"]), ev("e1", ["s"])]);
    await Promise.all([
      h.engine.ingest("agentpush", [ev("e2", ["s"])]),
      h.engine.ingest("agentpush", [ev("e2", ["s"])]),
    ]);
    const again = await h.engine.ingest("agentpush", [ev("e1", ["s"])]);
    expect(again.matched).toEqual([{ sentinelId: p.id, eventId: "e1", outcome: "duplicate" }]);
    await h.stop();
    const h2 = await startHarness(home, { clock: h.clock });
    await h2.engine.ingest("agentpush", [ev("e1", ["s"]), ev("e2", ["s"]), ev("e3", ["s"])]);
    expect([...h.rec.delivered, ...h2.rec.delivered].map((d) => d.event.id)).toEqual(["e1", "e2", "e3"]);
    expect((await h2.engine.project(p.id)).deliveredCount).toBe(3);
    h = h2;
  });

  it("keeps deferred deliveries in flight (still duplicates) until markSeen, across a restart", async () => {
    h.rec.ack = "deferred";
    const p = await h.engine.create(spec("s"), "loopback");
    await h.engine.ingest("agentpush", [ev("e1", ["s"])]);
    await h.stop();
    const h2 = await startHarness(home, { clock: h.clock });
    h = h2;
    expect((await h2.engine.ingest("agentpush", [ev("e1", ["s"])])).matched[0]!.outcome).toBe("duplicate");
    await h2.engine.markSeen(p.id, "e1");
    const fresh = new SentinelDedup(home);
    await fresh.load(p.id);
    expect([fresh.has(p.id, "e1"), fresh.inflight(p.id), fresh.delivered(p.id)]).toEqual([true, [], 1]);
    await fresh.close();
    expect((await h2.engine.ingest("agentpush", [ev("e1", ["s"])])).matched[0]!.outcome).toBe("duplicate");
    expect(h2.rec.delivered).toEqual([]);
  });

  it("reports a failed delivery and delivers the same event when it is pushed again", async () => {
    await h.engine.create(spec("s"), "loopback");
    h.rec.failNext = 1;
    const r = await h.engine.ingest("agentpush", [ev("e1", ["s"])]);
    expect(r.matched[0]).toMatchObject({ outcome: "failed", error: "target is down" });
    const again = await h.engine.ingest("agentpush", [ev("e1", ["s"])]);
    expect(again.matched[0]!.outcome).toBe("delivered");
    expect(h.rec.delivered.map((d) => d.event.id)).toEqual(["e1"]);
  });

  it("pipelines one sentinel's batch: target order kept, every outcome durable once the push returns", async () => {
    const p = await h.engine.create(spec("s"), "loopback");
    const ids = Array.from({ length: 40 }, (_, i) => `e${i}`);
    const r = await h.engine.ingest("agentpush", [...ids.map((id) => ev(id, ["s"])), ev("e3", ["s"])]);
    expect(r.matched.map((m) => m.outcome)).toEqual([...ids.map(() => "delivered"), "duplicate"]);
    expect(h.rec.delivered.map((d) => d.event.id)).toEqual(ids);
    const fresh = new SentinelDedup(home);
    await fresh.load(p.id);
    expect([fresh.delivered(p.id), ids.every((id) => fresh.has(p.id, id))]).toEqual([40, true]);
    await fresh.close();
  });

  it("reports failed (and counts nothing) when the dedup append fails after the target accepted", async () => {
    const p = await h.engine.create(spec("s"), "loopback");
    // A file where the dedup directory belongs makes the journal impossible to create.
    await writeFile(join(home, "sentinels-dedup"), "");
    const r = await h.engine.ingest("agentpush", [ev("e1", ["s"]), ev("e2", ["s"])]);
    expect(r.matched.map((m) => m.outcome)).toEqual(["failed", "failed"]);
    expect(r.matched[0]!.error).toBeTruthy();
    expect((await h.engine.project(p.id)).deliveredCount).toBe(0);
    await rm(join(home, "sentinels-dedup"));
    expect((await h.engine.ingest("agentpush", [ev("e1", ["s"])])).matched[0]!.outcome).toBe("delivered");
    expect((await h.engine.project(p.id)).deliveredCount).toBe(1);
  });

  it(`delivers to many sentinels in parallel, but to at most ${DELIVERY_CONCURRENCY} at once`, async () => {
    const n = DELIVERY_CONCURRENCY + 20;
    // Created together: they share the store's writes (group commit).
    await Promise.all(Array.from({ length: n }, (_, i) => h.engine.create(spec(`job:${i}`), "loopback")));
    let now = 0;
    let peak = 0;
    h.rec.onDeliver = async () => {
      peak = Math.max(peak, ++now);
      await new Promise((r) => setImmediate(r));
      now--;
    };
    const r = await h.engine.ingest(
      "agentpush",
      Array.from({ length: n }, (_, i) => ev(`e${i}`, [`job:${i}`])),
    );
    expect(r.matched.filter((m) => m.outcome === "delivered")).toHaveLength(n);
    expect(peak).toBeGreaterThan(64);
    expect(peak).toBeLessThanOrEqual(DELIVERY_CONCURRENCY);
  });

  it("stopping waits for an ingest in progress to be durably accepted", async () => {
    await h.engine.create(spec("s"), "loopback");
    let release!: () => void;
    let started!: () => void;
    const delivering = new Promise<void>((r) => (started = r));
    h.rec.onDeliver = () => {
      started();
      return new Promise<void>((r) => (release = r));
    };
    const ingest = h.engine.ingest("agentpush", [ev("e1", ["s"])]);
    await delivering;
    let stopped = false;
    const stopping = h.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect((await ingest).matched[0]!.outcome).toBe("delivered");
    h = await startHarness(home, { clock: h.clock });
    expect((await h.engine.ingest("agentpush", [ev("e1", ["s"])])).matched[0]!.outcome).toBe("duplicate");
  });

  it("rejects malformed events (ids with a dot, no subjects) before matching anything", async () => {
    await h.engine.create(spec("s"), "loopback");
    await expect(h.engine.ingest("agentpush", [{ id: "a.b", type: "t", subjects: ["s"] }])).rejects.toMatchObject({
      code: "invalid_input",
    });
    await expect(h.engine.ingest("agentpush", [{ id: "a", type: "t", subjects: [] }])).rejects.toMatchObject({
      code: "invalid_input",
    });
    expect(h.rec.delivered).toEqual([]);
  });

  it("emits sentinel:matched daemon events without event data", async () => {
    const p = await h.engine.create(spec("s"), "loopback");
    await h.engine.ingest("agentpush", [{ ...ev("e1", ["s"]), data: { token: "sekrit" } }]);
    const matched = h.daemonEvents.filter((e) => e.type === "sentinel:matched");
    expect(matched).toHaveLength(1);
    expect(matched[0]!.data).toMatchObject({ sentinelId: p.id, eventId: "e1", provider: "agentpush", target: "test" });
    expect(JSON.stringify(h.daemonEvents)).not.toContain("sekrit");
  });
});

describe("sentinel store files", () => {
  it("refuses to start on a sentinels.json that is not JSON, naming the file", async () => {
    const { writeFile } = await import("node:fs/promises");
    await h.stop();
    await writeFile(join(home, "sentinels.json"), "{not json");
    await expect(startHarness(home)).rejects.toMatchObject({
      code: "config_invalid",
      message: expect.stringContaining("sentinels.json"),
    });
    await writeFile(join(home, "sentinels.json"), JSON.stringify({ version: 1, sentinels: "nope" }));
    await expect(startHarness(home)).rejects.toMatchObject({
      message: expect.stringContaining("is not a sentinels file"),
    });
    await writeFile(join(home, "sentinels.json"), JSON.stringify({ version: 1, sentinels: [] }));
    h = await startHarness(home);
    expect(await h.engine.list()).toEqual([]);
  });

  it("writes sentinels.json with mode 0600", async () => {
    const { stat } = await import("node:fs/promises");
    await h.engine.create(spec("s"), "loopback");
    expect((await stat(join(home, "sentinels.json"))).mode & 0o777).toBe(0o600);
  });
});
