/**
 * The agentpush provider over the daemon's real HTTP surface (in-process daemon with the test
 * target): failure answers, terminal marks, limits. The happy paths through the real daemon
 * process are in test/e2e/sentinels.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome } from "../../support/cli.js";
import { startTestDaemon } from "../../core/sentinels/harness.js";

type TestDaemon = Awaited<ReturnType<typeof startTestDaemon>>;
let cleanup: () => Promise<void>;
let d: TestDaemon;

beforeEach(async () => {
  const t = await makeTempHome("svc-agentpush-");
  cleanup = t.cleanup;
  d = await startTestDaemon(t.home);
});
afterEach(async () => {
  await d.stop();
  await cleanup();
});

const push = (id: string) => d.call("POST", "/providers/agentpush/events", { id, type: "t", subjects: ["job:x"] });

describe("agentpush over HTTP", () => {
  it("answers 503 when a matched event was not accepted by its target, and delivers it when pushed again", async () => {
    await d.call("POST", "/sentinels", {
      match: [{ subject: "job:x" }],
      until: { kind: "never" },
      target: { kind: "test", name: "t" },
    });
    d.rec.failNext = 1;
    const r = await push("e1");
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({
      code: "unavailable",
      details: { failed: [expect.objectContaining({ eventId: "e1", error: "target is down" })] },
    });
    expect((await push("e1")).status).toBe(200);
    expect(d.rec.delivered.map((x) => x.event.id)).toEqual(["e1"]);
  });

  it("terminal: true ends subject_terminal sentinels on the last subject after delivering the event; terminal: [...] names subjects", async () => {
    const mk = (subject: string) =>
      d.call("POST", "/sentinels", {
        match: [{ subject }],
        until: { kind: "subject_terminal" },
        target: { kind: "test", name: "t" },
      });
    const { body: a } = await mk("job:a#1");
    const { body: b } = await mk("job:b");
    const r = await d.call("POST", "/providers/agentpush/events", [
      { id: "x1", type: "done", subjects: ["job:a", "job:a#1"], terminal: true },
      { id: "x2", type: "more", subjects: ["job:a", "job:a#1"] },
    ]);
    expect(r.body.matched.map((m: { outcome: string }) => m.outcome)).toEqual(["delivered", "expired"]);
    await d.call("POST", "/providers/agentpush/events", {
      id: "y1",
      type: "other",
      subjects: ["elsewhere"],
      terminal: ["job:b"],
    });
    expect((await d.call("GET", `/sentinels/${a.id}`)).body.status).toBe("expired");
    expect((await d.call("GET", `/sentinels/${b.id}`)).body).toMatchObject({
      status: "expired",
      endedReason: "subject_terminal",
    });
  });

  it("reports readiness as always ready and watches every type by default", async () => {
    const { body } = await d.call("GET", "/sentinel-providers");
    expect(body.providers.find((p: { kind: string }) => p.kind === "agentpush").readiness).toEqual({
      ready: true,
      detail: expect.stringContaining("/providers/agentpush/events"),
    });
    await d.call("POST", "/sentinels", {
      match: [{ subject: "job:x" }],
      until: { kind: "never" },
      target: { kind: "test", name: "t" },
    });
    await d.call("POST", "/providers/agentpush/events", [
      { id: "a", type: "any.thing", subjects: ["job:x"] },
      { id: "b", type: "x", subjects: ["job:x"], time: "2026-01-01T00:00:00Z", data: [1] },
    ]);
    expect(d.rec.delivered.map((x) => x.event)).toEqual([
      { id: "a", type: "any.thing", subjects: ["job:x"] },
      { id: "b", type: "x", subjects: ["job:x"], time: "2026-01-01T00:00:00Z", data: [1] },
    ]);
  });

  it("rejects more than 1000 events per push and a non-JSON body", async () => {
    const many = Array.from({ length: 1001 }, (_, i) => ({ id: `e${i}`, type: "t", subjects: ["s"] }));
    expect((await d.call("POST", "/providers/agentpush/events", many)).status).toBe(400);
    const res = await fetch(`http://127.0.0.1:${d.daemon.info.port}/providers/agentpush/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${d.daemon.info.token}`, "content-type": "application/json" },
      body: "not json",
    });
    expect(res.status).toBe(400);
  });
});
