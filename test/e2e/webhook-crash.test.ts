import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempHome, startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(40, 3).toString("base64")}`;
const ROUNDS = 20;
/** Events pushed per daemon life at most, so the whole run stays under the outbox's 2,000-row cap (no eviction). */
const PER_ROUND = 72;

describe("webhook delivery survives kill -9 at random moments of a delivery storm", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  let rx: WebhookReceiver;
  let d: DaemonProcess | undefined;

  beforeAll(async () => {
    ({ home, cleanup } = await makeTempHome("svc-e2e-webhook-crash-"));
    await writeFile(join(home, "config.json"), JSON.stringify(LOOPBACK_CONFIG));
    rx = await startWebhookReceiver([SECRET]);
    // Every 17th request answers 503, but never twice for one event: failures stay transient, so
    // with 5 attempts per row every accepted event must end delivered.
    let n = 0;
    const failed = new Set<string>();
    rx.respond = (x, res) => {
      const fail = ++n % 17 === 0 && !failed.has(x.id);
      if (fail) failed.add(x.id);
      setTimeout(() => res.writeHead(fail ? 503 : 200).end(), n % 5);
    };
  });
  afterAll(async () => {
    await d?.kill9();
    await rx.close();
    await cleanup();
  });

  // The timeout guards against a hang; it is no speed check: 20 daemon starts take minutes on a loaded 2-core machine.
  it(`${ROUNDS} kills: every accepted event ends delivered (the receiver fails only transiently), none lost, identical bytes per webhook-id`, async () => {
    d = await startDaemonProcess({ home });
    const created = await d.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ match: [{ subject: "storm:*" }], until: { kind: "never" }, provider: "agentpush", target: { kind: "webhook", url: rx.url, secret: SECRET } }),
    });
    expect(created.status).toBe(201);
    const sentinelId = ((await created.json()) as { id: string }).id;
    const accepted = new Set<string>();
    let seq = 0;

    for (let round = 0; round < ROUNDS; round++) {
      d ??= await startDaemonProcess({ home });
      const daemon = d;
      let stop = false;
      let firstAccepted: () => void = () => undefined;
      const armed = new Promise<void>((r) => (firstAccepted = r));
      const roundStart = seq;
      const pusher = async () => {
        while (!stop && seq - roundStart < PER_ROUND) {
          const events = Array.from({ length: 8 }, () => ({ id: `evt_${round}_${seq++}`, type: "storm.item.made", subjects: ["storm:a", `storm:a#${seq}`], data: { round, pad: "p".repeat(seq % 3000) } }));
          try {
            const res = await daemon.fetch("/providers/agentpush/events", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(events) });
            if (res.status === 200) {
              events.forEach((e) => accepted.add(e.id));
              firstAccepted();
            }
            await res.arrayBuffer();
          } catch {
            return; // the daemon died mid-request: those events were not acknowledged
          }
        }
      };
      const pushers = [pusher(), pusher(), pusher()];
      await Promise.race([armed, new Promise((r) => setTimeout(r, 5_000))]);
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 400)));
      await daemon.kill9();
      stop = true;
      await Promise.all(pushers);
      d = undefined;
    }

    d = await startDaemonProcess({ home });
    const daemon = d;
    const rows = async () => ((await (await daemon.fetch(`/sentinels/${sentinelId}`)).json()) as { target: { outbox: { rows: Array<{ eventId: string; status: string; deadReason?: string }> } } }).target.outbox.rows;
    // Waits for the condition itself (every row terminal); the test's timeout is the only bound.
    let final = await rows();
    while (final.some((r) => r.status === "pending")) {
      await new Promise((r) => setTimeout(r, 100));
      final = await rows();
    }
    expect(accepted.size).toBeGreaterThanOrEqual(ROUNDS * 8);
    const byId = new Map(final.map((r) => [r.eventId, r]));
    for (const id of accepted) {
      const row = byId.get(id);
      expect(row, `accepted event ${id} has a row (${accepted.size} accepted, ${final.length} rows)`).toBeDefined();
      // A body lost or torn in a crash would end dead (delivered_rejected): never for an accepted event.
      expect(row!.status, `accepted event ${id} ends delivered (dead reason: ${row!.deadReason ?? "none"})`).toBe("delivered");
      expect(rx.deliveries.some((x) => x.id === id)).toBe(true);
    }
    expect(final.every((r) => r.status !== "pending")).toBe(true);
    expect(rx.unverified).toHaveLength(0);
    const shas = new Map<string, Set<string>>();
    for (const x of rx.deliveries) (shas.get(x.id) ?? shas.set(x.id, new Set()).get(x.id)!).add(x.sha);
    for (const [id, set] of shas) expect(set.size, `bodies seen for ${id}`).toBe(1);
  }, 900_000);
});
