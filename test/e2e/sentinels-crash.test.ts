/**
 * kill -9 of the daemon while sentinels are being created and events pushed: the store and the
 * dedup files stay readable, the daemon starts again, and what it reports is consistent.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useRecordingDaemon } from "./recording-sandbox.js";

const fx = useRecordingDaemon();
const post = (path: string, body: unknown) =>
  fx.daemon
    .fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    .then(
      (r) => r.status,
      () => 0,
    );

describe("kill -9 mid-write", () => {
  it("leaves sentinels.json and the dedup files whole, and the daemon serves on after a restart", async () => {
    const spec = (i: number) => ({
      match: [{ subject: `job:${i % 5}` }],
      until: { kind: "never" },
      target: { kind: "recording", name: `k${i}` },
    });
    for (let i = 0; i < 5; i++) expect(await post("/sentinels", spec(i))).toBe(201);
    const inFlight = [
      ...Array.from({ length: 30 }, (_, i) => post("/sentinels", spec(i + 5))),
      ...Array.from({ length: 30 }, (_, i) =>
        post("/providers/agentpush/events", { id: `k${i}`, type: "t", subjects: [`job:${i % 5}`] }),
      ),
    ];
    await new Promise((r) => setTimeout(r, 40));
    await fx.daemon.kill9();
    await Promise.all(inFlight);

    const stored = JSON.parse(await readFile(join(fx.home, "sentinels.json"), "utf8"));
    expect(stored.version).toBe(1);
    const ids = stored.sentinels.map((s: { id: string }) => s.id);
    expect(ids.length).toBeGreaterThanOrEqual(5);
    for (const f of await readdir(join(fx.home, "sentinels-dedup")).catch(() => [] as string[])) {
      if (!f.endsWith(".json")) continue;
      const state = JSON.parse(await readFile(join(fx.home, "sentinels-dedup", f), "utf8"));
      expect(Array.isArray(state.seen) && typeof state.delivered === "number").toBe(true);
    }

    const d = await fx.start();
    const list = (await (await d.fetch("/sentinels")).json()) as {
      sentinels: Array<{ id: string; spec: { match: Array<{ subject: string }> } }>;
    };
    expect(list.sentinels.map((s) => s.id).sort()).toEqual([...ids].sort());
    expect(await post("/providers/agentpush/events", { id: "after", type: "t", subjects: ["job:0"] })).toBe(200);
    const lines = (await readFile(join(fx.home, "plugins", "target-recording", "deliveries.jsonl"), "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const afterCount = lines.filter((l) => l.eventId === "after").length;
    expect(afterCount).toBe(list.sentinels.filter((s) => s.spec.match[0]!.subject === "job:0").length);
    expect(afterCount).toBeGreaterThanOrEqual(1);
    const dup = await post("/providers/agentpush/events", { id: "after", type: "t", subjects: ["job:0"] });
    expect(dup).toBe(200);
    const again = (await readFile(join(fx.home, "plugins", "target-recording", "deliveries.jsonl"), "utf8"))
      .split("\n")
      .filter((l) => l.includes('"after"')).length;
    expect(again).toBe(afterCount);
  });
});
