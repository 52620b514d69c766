import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempHome, startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(32, 5).toString("base64")}`;
const SENTINELS = 1000;

/**
 * Issue 23: with 1,000 webhook sentinels stored (event i matching sentinel i mod 1,000) and 4
 * pushers sending 64-event batches back to back, a daemon once fell to 0.5-2 events/s and ignored
 * SIGTERM at 100% CPU. Under that load, SIGTERM must stop it within 10 s, and every event it
 * acknowledged must still be known after the next start.
 */
describe("SIGTERM during a delivery storm to 1,000 webhook sentinels", () => {
  let rx: WebhookReceiver;
  let home: string;
  let cleanup: () => Promise<void>;
  let d: DaemonProcess | undefined;
  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
    ({ home, cleanup } = await makeTempHome("svc-e2e-storm-stop-"));
    await writeFile(join(home, "config.json"), JSON.stringify(LOOPBACK_CONFIG));
  });
  afterAll(async () => {
    await d?.kill9();
    await rx?.close();
    await cleanup();
  });

  it("stops within 10 s, and every acknowledged event is still known at the next start", async () => {
    // One sentinel created through the daemon (challenge, vault); the others are copies of its record.
    d = await startDaemonProcess({ home });
    const created = await d.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        match: [{ subject: "storm:0" }],
        until: { kind: "never" },
        provider: "agentpush",
        target: { kind: "webhook", url: rx.url, secret: SECRET },
      }),
    });
    expect(created.status).toBe(201);
    await d.stop();
    const file = join(home, "sentinels.json");
    const stored = JSON.parse(await readFile(file, "utf8")) as {
      sentinels: Array<{ id: string; spec: Record<string, unknown> }>;
    };
    const original = stored.sentinels[0]!;
    for (let k = 1; k < SENTINELS; k++) {
      stored.sentinels.push({
        ...original,
        id: `${original.id.slice(0, 26)}${String(k).padStart(4, "0")}`,
        spec: { ...original.spec, match: [{ subject: `storm:${k}` }] },
      });
    }
    await writeFile(file, JSON.stringify(stored));

    d = await startDaemonProcess({ home });
    const daemon = d;
    const acknowledged = new Set<string>();
    let next = 0;
    let stop = false;
    const pusher = async () => {
      while (!stop) {
        const events = Array.from({ length: 64 }, () => {
          const i = next++;
          return {
            id: `evt_${i}`,
            type: "storm.item.made",
            subjects: [`storm:${i % SENTINELS}`],
            data: { i, pad: "p".repeat(400) },
          };
        });
        try {
          const res = await daemon.fetch("/providers/agentpush/events", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(events),
          });
          const body = (await res.json().catch(() => undefined)) as
            | { matched?: Array<{ eventId: string; outcome: string }> }
            | undefined;
          if (res.status === 200)
            for (const m of body?.matched ?? []) if (m.outcome === "delivered") acknowledged.add(m.eventId);
          if (res.status === 503) await new Promise((r) => setTimeout(r, 100));
        } catch {
          return; // the daemon is gone
        }
      }
    };
    const pushers = Array.from({ length: 4 }, pusher);
    // The storm is on once a few thousand events were acknowledged (every sentinel has matched).
    while (acknowledged.size < 2 * SENTINELS) await new Promise((r) => setTimeout(r, 20));
    const t0 = Date.now();
    await daemon.stop();
    const stoppedMs = Date.now() - t0;
    stop = true;
    await Promise.all(pushers);
    expect(stoppedMs, `SIGTERM to exit took ${stoppedMs} ms`).toBeLessThan(10_000);

    // Every acknowledged event is still known after the next start: pushed again, each is a duplicate
    // (its row, or once the cap evicted it, its sentinel's trace), and nothing is sent twice.
    d = await startDaemonProcess({ home });
    const again = d;
    const known = [...acknowledged].sort();
    for (let k = 0; k < known.length; k += 500) {
      const batch = known.slice(k, k + 500).map((id) => ({
        id,
        type: "storm.item.made",
        subjects: [`storm:${Number(id.slice(4)) % SENTINELS}`],
        data: {},
      }));
      const res = await again.fetch("/providers/agentpush/events", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(batch),
      });
      const body = (await res.json()) as { matched: Array<{ eventId: string; outcome: string }> };
      const notDuplicate = body.matched.filter((m) => m.outcome !== "duplicate");
      expect(notDuplicate, "acknowledged events pushed again").toEqual([]);
    }
  });
});
