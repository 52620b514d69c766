import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../core/runtime/logger.js";
import { buildEnvelope } from "../../plugins/webhook-target/envelope.js";
import { Outbox } from "../../plugins/webhook-target/outbox/outbox.js";
import { makeTempHome, startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(32, 21).toString("base64")}`;

describe("a full outbox (2,000 pending rows) refuses new events with a non-2xx, losing nothing", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  let rx: WebhookReceiver;
  let d: DaemonProcess | undefined;
  const hanging: Array<() => void> = [];

  beforeAll(async () => {
    ({ home, cleanup } = await makeTempHome("svc-e2e-webhook-full-"));
    await writeFile(join(home, "config.json"), JSON.stringify(LOOPBACK_CONFIG));
    rx = await startWebhookReceiver([SECRET]);
  });
  afterAll(async () => {
    await d?.kill9();
    hanging.forEach((f) => f());
    await rx.close();
    await cleanup();
  });

  it("answers the push 503 unavailable, and accepts again once rows are terminal", async () => {
    d = await startDaemonProcess({ home });
    const created = await d.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        match: [{ subject: "full:*" }],
        until: { kind: "never" },
        provider: "agentpush",
        target: { kind: "webhook", url: rx.url, secret: SECRET },
      }),
    });
    const sentinelId = ((await created.json()) as { id: string }).id;
    await d.stop();
    let n = 0;
    const ob = await Outbox.open({
      home,
      now: Date.now,
      newId: () => `req_seed${String(n++).padStart(5, "0")}`,
      logger: createMemoryLogger(),
    });
    for (let b = 0; b < 2_000; b += 200) {
      await Promise.all(
        Array.from({ length: 200 }, (_, k) => {
          const id = `evt_seed_${b + k}`;
          return ob.add({
            sentinelId,
            eventId: id,
            body: buildEnvelope(sentinelId, { id, type: "full.x.y", subjects: ["full:1"] }, Date.now()),
          });
        }),
      );
    }
    await ob.close();
    rx.respond = (_x, res) => hanging.push(() => res.writeHead(200).end());
    d = await startDaemonProcess({ home });
    const push = (id: string) =>
      d!.fetch("/providers/agentpush/events", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id, type: "full.x.y", subjects: ["full:1"] }),
      });
    const refused = await push("evt_new");
    expect(refused.status).toBe(503);
    const body = (await refused.json()) as { error: { code: string; details: { failed: Array<{ error: string }> } } };
    expect(body.error.code).toBe("unavailable");
    expect(body.error.details.failed[0]!.error).toMatch(/outbox is full: all 2000 rows are pending/);
    rx.respond = (_x, res) => res.writeHead(200).end();
    hanging.splice(0).forEach((f) => f());
    const deadline = Date.now() + 30_000;
    let accepted = false;
    while (!accepted && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      accepted = (await push("evt_new")).status === 200;
    }
    expect(accepted).toBe(true);
    const deadline2 = Date.now() + 30_000;
    while (!rx.deliveries.some((x) => x.id === "evt_new") && Date.now() < deadline2)
      await new Promise((r) => setTimeout(r, 50));
    expect(rx.deliveries.some((x) => x.id === "evt_new")).toBe(true);
  });
});
