import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempHome, runCli, startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { stormSize } from "../support/storm-size.js";
import { killStorm } from "./kill-storm.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(40, 3).toString("base64")}`;
const ROUNDS = stormSize(10, 20);
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
      body: JSON.stringify({
        match: [{ subject: "storm:*" }],
        until: { kind: "never" },
        provider: "agentpush",
        target: { kind: "webhook", url: rx.url, secret: SECRET },
      }),
    });
    expect(created.status).toBe(201);
    const sentinelId = ((await created.json()) as { id: string }).id;
    const accepted = new Set<string>();
    const first = d;
    d = undefined;
    await killStorm({
      home,
      rounds: ROUNDS,
      perRound: PER_ROUND,
      daemon: first,
      accepted: (ids) => ids.forEach((id) => accepted.add(id)),
    });

    // Issue 23: the home the last kill left (torn tails, retired journals, unreferenced segments,
    // a stale runtime.json) is crash residue: svc doctor calls it healthy, offline.
    const doctor = await runCli(["doctor", "--json"], { home });
    const report = JSON.parse(doctor.stdout) as { healthy: boolean; findings: Array<{ severity: string }> };
    expect(
      report.findings.filter((f) => f.severity === "error"),
      doctor.stdout,
    ).toEqual([]);
    expect(report.healthy).toBe(true);
    expect(doctor.code).toBe(0);

    d = await startDaemonProcess({ home });
    const daemon = d;
    const rows = async () =>
      (
        (await (await daemon.fetch(`/sentinels/${sentinelId}`)).json()) as {
          target: { outbox: { rows: Array<{ eventId: string; status: string; deadReason?: string }> } };
        }
      ).target.outbox.rows;
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
      expect(row!.status, `accepted event ${id} ends delivered (dead reason: ${row!.deadReason ?? "none"})`).toBe(
        "delivered",
      );
      expect(rx.deliveries.some((x) => x.id === id)).toBe(true);
    }
    expect(final.every((r) => r.status !== "pending")).toBe(true);
    expect(rx.unverified).toHaveLength(0);
    const shas = new Map<string, Set<string>>();
    for (const x of rx.deliveries) (shas.get(x.id) ?? shas.set(x.id, new Set()).get(x.id)!).add(x.sha);
    for (const [id, set] of shas) expect(set.size, `bodies seen for ${id}`).toBe(1);
  }, 900_000);
});
