/**
 * Issue 42, finding 4: a home stopped on a full disk starts again. $SVC_HOME is a 2 MiB tmpfs
 * (mounting one needs root; elsewhere the test is skipped) holding 40 pending webhook rows, filled
 * to the last block, then stopped. The start that follows used to let the outbox's start-up
 * compaction take the last bytes and then fail on runtime.json (`ENOSPC writing runtime.json`),
 * and the daemon kept running unreachable. Now a start that lacks the daemon's room writes nothing
 * and says how much to free; freed that much, the daemon starts with the compaction skipped (a
 * warning with the numbers) and every row listed; freed all, every pending event is delivered and
 * the compaction runs at the stop.
 */
import type { ServerResponse } from "node:http";
import { readdirSync, readFileSync, rmSync, statSync, truncateSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { createWebhookSentinel } from "../support/team.js";
import { fill, tmpfsHome, type TmpfsHome } from "../support/tmpfs-home.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, until, type WebhookReceiver } from "../support/webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(32, 42).toString("base64")}`;
const SKIPPED = "outbox compaction skipped: not enough free space; the journal keeps every record";
const EVENTS = Array.from({ length: 40 }, (_, i) => `full_${i}`);

/** Every file under `dir` with its size (the filler and the log aside), to tell that nothing was written. */
function files(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => !(prefix === "" && (e.name === "filler" || e.name === "logs")))
    .flatMap((e) =>
      e.isDirectory()
        ? files(join(dir, e.name), `${prefix}${e.name}/`)
        : [`${prefix}${e.name} ${statSync(join(dir, e.name)).size}`],
    )
    .sort();
}

/** The daemon's log lines with this message. */
const logged = (d: DaemonProcess, msg: string): Array<Record<string, unknown>> =>
  d
    .logs()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === msg);

describe("a home stopped on a full disk (real daemon on a 2 MiB tmpfs)", () => {
  let t: TmpfsHome;
  let rx: WebhookReceiver;
  let d: DaemonProcess | undefined;
  const held: ServerResponse[] = [];
  beforeAll(async () => {
    t = await tmpfsHome("svc-e2e-fullstart-", "2m");
    await writeFile(join(t.home, "config.json"), JSON.stringify(LOOPBACK_CONFIG));
    rx = await startWebhookReceiver([SECRET]);
  });
  afterAll(async () => {
    await d?.kill9();
    for (const res of held) res.destroy();
    await rx?.close();
    await t?.cleanup();
  });
  const outbox = async (id: string) =>
    ((await (await d!.fetch(`/sentinels/${id}`)).json()) as any).target.outbox as {
      pending: number;
      delivered: number;
      rows: Array<{ eventId: string; status: string }>;
    };

  it("refuses to start saying how much to free, starts once that is free, and delivers every pending event", async (ctx) => {
    if (!t.mounted) ctx.skip();
    // Deliveries held unanswered: the 40 rows stay pending (their bodies are what a compaction writes).
    rx.respond = (_d, res) => void held.push(res);
    d = await startDaemonProcess({ home: t.home });
    const id = await createWebhookSentinel(d, { subject: "full:*", url: rx.url, secret: SECRET });
    for (let b = 0; b < EVENTS.length; b += 10) {
      const pushed = await d.fetch("/providers/agentpush/events", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(
          EVENTS.slice(b, b + 10).map((e) => ({
            id: e,
            type: "full.x.y",
            subjects: ["full:a"],
            data: { pad: "p".repeat(2000) },
          })),
        ),
      });
      expect(pushed.status).toBe(200);
    }
    expect((await outbox(id)).pending).toBe(EVENTS.length);

    // The disk fills; the stop's compaction finds no room and is skipped (it wrote a partial segment before).
    const filler = join(t.home, "filler");
    fill(filler);
    await d.stop();
    expect(logged(d, SKIPPED)).not.toEqual([]);
    const stopped = files(t.home);

    // A start without the daemon's room says how much it needs and writes nothing (it used to fail
    // on runtime.json after the outbox's compaction took the last bytes, and kept running).
    const refused = await startDaemonProcess({ home: t.home, timeoutMs: 30_000 }).then(
      () => "started",
      (err: Error) => err.message,
    );
    const need =
      /the disk holding \$SVC_HOME \(.*\) is full: svc needs about (\d+) KiB free to start \(runtime\.json[^)]*\) and (\d+) KiB are free; free space on that filesystem and start again/.exec(
        refused,
      );
    expect(need, refused).not.toBeNull();
    // `svc start` (a detached child, whose only voice is the log) says the same before spawning.
    const detached = await runCli(["start"], { home: t.home });
    expect(detached.code).toBe(1);
    expect(detached.stderr).toContain(`svc needs about ${need![1]} KiB free to start`);
    expect(files(t.home)).toEqual(stopped);

    // Freed what it asked for (and a little): it starts; the compaction, which needs more, waits.
    const free = (Number(need![1]) - Number(need![2]) + 8) * 1024;
    truncateSync(filler, statSync(filler).size - free);
    d = await startDaemonProcess({ home: t.home });
    const skipped = logged(d, SKIPPED);
    expect(skipped.length).toBeGreaterThan(0);
    expect(skipped[0]!.neededBytes as number).toBeGreaterThan(skipped[0]!.freeBytes as number);
    const kept = await outbox(id);
    expect(kept.pending).toBe(EVENTS.length);
    expect(kept.rows.map((r) => r.eventId).sort()).toEqual([...EVENTS].sort());

    // Space freed: every pending event is delivered, and the stop's compaction runs.
    rmSync(filler);
    rx.respond = (_d, res) => res.writeHead(200).end("ok");
    for (const res of held.splice(0)) if (!res.writableEnded && !res.destroyed) res.writeHead(200).end("ok");
    await until(
      async () => (await outbox(id)).delivered === EVENTS.length || undefined,
      "every event delivered",
      60_000,
    );
    const delivered = new Set(rx.deliveries.map((x) => x.id));
    expect(EVENTS.filter((e) => !delivered.has(e))).toEqual([]);
    await d.stop();
    const left = readdirSync(t.home);
    expect(left.filter((f) => /^sentinel-webhook-outbox\.journal\.\d+$/.test(f))).toEqual([]);
    const snapshot = JSON.parse(readFileSync(join(t.home, "sentinel-webhook-outbox.json"), "utf8")) as {
      rows: Array<{ eventId: string; status: string }>;
    };
    expect(
      snapshot.rows
        .filter((r) => r.status === "delivered")
        .map((r) => r.eventId)
        .sort(),
    ).toEqual([...EVENTS].sort());
  });
});
