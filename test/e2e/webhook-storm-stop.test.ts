import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempHome, startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(32, 5).toString("base64")}`;
const SENTINELS = 1000;

/**
 * Issue 23: with 1,000 webhook sentinels stored (event i matching sentinel i mod 1,000) and 4
 * pushers sending 64-event batches back to back, a daemon once fell to 0.5-2 events/s and ignored
 * SIGTERM at 100% CPU. Under that load, SIGTERM must stop it within 10 s, and every event it
 * acknowledged must have its row after the next start.
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

  it("stops within 10 s, and every acknowledged event has its row at the next start", async () => {
    // One sentinel created through the daemon (challenge, vault); the others are copies of its record.
    d = await startDaemonProcess({ home });
    const created = await d.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ match: [{ subject: "storm:0" }], until: { kind: "never" }, provider: "agentpush", target: { kind: "webhook", url: rx.url, secret: SECRET } }),
    });
    expect(created.status).toBe(201);
    await d.stop();
    const file = join(home, "sentinels.json");
    const stored = JSON.parse(await readFile(file, "utf8")) as { sentinels: Array<{ id: string; spec: Record<string, unknown> }> };
    const original = stored.sentinels[0]!;
    for (let k = 1; k < SENTINELS; k++) {
      stored.sentinels.push({ ...original, id: `${original.id.slice(0, 26)}${String(k).padStart(4, "0")}`, spec: { ...original.spec, match: [{ subject: `storm:${k}` }] } });
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
          return { id: `evt_${i}`, type: "storm.item.made", subjects: [`storm:${i % SENTINELS}`], data: { i, pad: "p".repeat(400) } };
        });
        try {
          const res = await daemon.fetch("/providers/agentpush/events", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(events) });
          const body = (await res.json().catch(() => undefined)) as { matched?: Array<{ eventId: string; outcome: string }> } | undefined;
          if (res.status === 200) for (const m of body?.matched ?? []) if (m.outcome === "delivered") acknowledged.add(m.eventId);
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

    d = await startDaemonProcess({ home });
    const again = d;
    const rows = new Set<string>();
    for (const k of [0, 1, 2, 999]) {
      const id = k === 0 ? original.id : `${original.id.slice(0, 26)}${String(k).padStart(4, "0")}`;
      const status = (await (await again.fetch(`/sentinels/${id}`)).json()) as { target: { outbox: { rows: Array<{ eventId: string }> } } };
      for (const r of status.target.outbox.rows) rows.add(r.eventId);
    }
    const expected = [...acknowledged].filter((e) => [0, 1, 2, 999].includes(Number(e.slice(4)) % SENTINELS));
    expect(expected.length).toBeGreaterThan(0);
    for (const e of expected) expect(rows.has(e), `acknowledged ${e} has its row`).toBe(true);
  });
});
