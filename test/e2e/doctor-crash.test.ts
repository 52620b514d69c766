/**
 * Issue 23: "A home left by kill -9 in a delivery storm is healthy." The storm of
 * test/e2e/webhook-crash.test.ts, with a few kills, then `svc doctor` on what the last kill left
 * (torn tails, retired journals, unreferenced segments, a stale runtime.json are crash residue).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempHome, runCli, startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(40, 7).toString("base64")}`;
const ROUNDS = 5;
const PER_ROUND = 240;

describe("svc doctor after kill -9 in a delivery storm", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  let rx: WebhookReceiver;
  let d: DaemonProcess | undefined;

  beforeAll(async () => {
    ({ home, cleanup } = await makeTempHome("svc-e2e-doctor-crash-"));
    await writeFile(join(home, "config.json"), JSON.stringify(LOOPBACK_CONFIG));
    rx = await startWebhookReceiver([SECRET]);
    let n = 0;
    rx.respond = (_x, res) => setTimeout(() => res.writeHead(++n % 13 === 0 ? 503 : 200).end(), n % 5);
  });
  afterAll(async () => {
    await d?.kill9();
    await rx.close();
    await cleanup();
  });

  it(`${ROUNDS} kills mid-storm: svc doctor exits 0 and --json says healthy`, async () => {
    d = await startDaemonProcess({ home });
    const created = await d.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ match: [{ subject: "storm:*" }], until: { kind: "never" }, provider: "agentpush", target: { kind: "webhook", url: rx.url, secret: SECRET } }),
    });
    expect(created.status).toBe(201);
    const session = await d.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ match: [{ subject: "storm:*" }], until: { kind: "never" }, provider: "agentpush", target: { kind: "session", sessionId: "ses_storm" } }),
    });
    expect(session.status).toBe(201);
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
          const events = Array.from({ length: 8 }, () => ({ id: `evt_${round}_${seq++}`, type: "storm.item.made", subjects: ["storm:a"], data: { pad: "p".repeat(seq % 3000) } }));
          try {
            const res = await daemon.fetch("/providers/agentpush/events", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(events) });
            if (res.status === 200) firstAccepted();
            await res.arrayBuffer();
          } catch {
            return; // the daemon died mid-request
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
    expect(rx.deliveries.length).toBeGreaterThan(0);

    const json = await runCli(["doctor", "--json"], { home });
    const report = JSON.parse(json.stdout) as { healthy: boolean; findings: Array<{ severity: string; file: string }> };
    expect(report.findings.filter((f) => f.severity === "error"), json.stdout).toEqual([]);
    expect(report.healthy).toBe(true);
    expect(json.code).toBe(0);
    const human = await runCli(["doctor"], { home });
    expect(human.code).toBe(0);
    expect(human.stdout.trim().split("\n").at(-1)).toMatch(/^healthy:/);
  }, 120_000);
});
