/**
 * Issue 42, finding 3: the end of the outbox journal cut after a kill -9 (the last 10 whole lines
 * removed; or the file cut to 97 %, a torn tail inside an acknowledged record). Accepted events
 * were lost without an error and `svc doctor` said healthy. Now the journal's length record tells
 * the loss: `svc doctor` reports it offline, a start logs it at error with the count and the file
 * and keeps it in `<journal>.missing`, and deleting that file acknowledges it.
 */
import { cp, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempHome, runCli, startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, until, type WebhookReceiver } from "../support/webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(40, 7).toString("base64")}`;
const JOURNAL = "sentinel-webhook-outbox.journal";
const EVENTS = 24;

interface Finding {
  severity: "error" | "warn" | "info";
  file: string;
  message: string;
  fix: string;
}

const doctor = async (home: string) => {
  const r = await runCli(["doctor", "--json"], { home });
  const report = JSON.parse(r.stdout) as { healthy: boolean; findings: Finding[] };
  return { code: r.code, report, journal: report.findings.filter((f) => f.file === JOURNAL) };
};

/** The daemon's log lines (JSON) whose message starts with `msg`. */
const logLines = (d: DaemonProcess, msg: string): Array<Record<string, unknown>> =>
  d
    .logs()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => typeof l.msg === "string" && l.msg.startsWith(msg));

const lossLines = (d: DaemonProcess) => logLines(d, "outbox journal is missing records it had acknowledged as durable");

describe("a cut outbox journal is told: at start (error, with the count and the file) and by svc doctor", () => {
  let golden: string;
  let rx: WebhookReceiver;
  const cleanups: Array<() => Promise<void>> = [];
  let d: DaemonProcess | undefined;
  /** The journal's lines (the add records of the accepted events) as the kill left them. */
  let lines: string[] = [];

  beforeAll(async () => {
    const t = await makeTempHome("svc-e2e-journal-cut-");
    golden = t.home;
    cleanups.push(t.cleanup);
    await writeFile(join(golden, "config.json"), JSON.stringify(LOOPBACK_CONFIG));
    rx = await startWebhookReceiver([SECRET]);
    // Deliveries are held unanswered: every row stays pending, and no attempt ends (no update record).
    rx.respond = () => undefined;
    d = await startDaemonProcess({ home: golden });
    const created = await d.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        match: [{ subject: "cut:*" }],
        until: { kind: "never" },
        provider: "agentpush",
        target: { kind: "webhook", url: rx.url, secret: SECRET },
      }),
    });
    expect(created.status).toBe(201);
    // One push per event: each is acknowledged (durable) before the next.
    for (let i = 0; i < EVENTS; i++) {
      const res = await d.fetch("/providers/agentpush/events", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: `cut_${i}`, type: "cut.item.made", subjects: ["cut:a"], data: { i } }),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    await d.kill9();
    d = undefined;
    lines = (await readFile(join(golden, JOURNAL), "utf8")).split("\n").filter(Boolean);
  }, 120_000);
  afterAll(async () => {
    await d?.kill9();
    await rx.close();
    for (const c of cleanups) await c();
  });

  const copy = async () => {
    const t = await makeTempHome("svc-e2e-journal-cut-case-");
    cleanups.push(t.cleanup);
    await cp(golden, t.home, { recursive: true, preserveTimestamps: true });
    return t.home;
  };

  it("the home is as the cases need it: the accepted events' records in the journal, the kill left it healthy", async () => {
    expect(lines.filter((l) => l.includes('"op":"add"')).length).toBe(EVENTS);
    const { code, report } = await doctor(golden);
    expect(report.findings.filter((f) => f.severity === "error")).toEqual([]);
    expect(code).toBe(0);
  });

  it("the last 10 whole lines removed: doctor and the start tell 10 records missing, naming the file; deleting .missing acknowledges", async () => {
    const home = await copy();
    const p = join(home, JOURNAL);
    await writeFile(p, `${lines.slice(0, -10).join("\n")}\n`);
    const seqOf = (l: string) => Number(/"seq":(\d+)/.exec(l)![1]);

    // Offline, before any start.
    const before = await doctor(home);
    expect(before.code).toBe(1);
    expect(before.journal).toContainEqual(
      expect.objectContaining({
        severity: "error",
        message: expect.stringMatching(/^10 records svc had acknowledged/),
      }),
    );

    d = await startDaemonProcess({ home });
    const daemon = d;
    const [loss] = await until(() => lossLines(daemon).length > 0 && lossLines(daemon), "the loss line");
    expect(loss).toMatchObject({
      level: "error",
      file: JOURNAL,
      recordsMissing: 10,
      seqs: `${seqOf(lines.at(-10)!)}-${seqOf(lines.at(-1)!)}`,
    });
    const [loaded] = await until(
      () => logLines(daemon, "webhook outbox loaded").length > 0 && logLines(daemon, "webhook outbox loaded"),
      "the load line",
    );
    expect(loaded).toMatchObject({ level: "error", recordsMissing: 10, pending: EVENTS - 10 });
    await d.stop();
    d = undefined;

    // After the start the loss is kept, told until acknowledged.
    const after = await doctor(home);
    expect(after.code).toBe(1);
    expect(after.report.healthy).toBe(false);
    const kept = after.journal.find((f) => f.severity === "error")!;
    expect(kept.message).toContain("10 acknowledged records missing");
    expect(kept.fix).toContain(`${join(home, JOURNAL)}.missing`);

    await rm(join(home, `${JOURNAL}.missing`));
    const acknowledged = await doctor(home);
    expect(acknowledged.report.findings.filter((f) => f.severity === "error")).toEqual([]);
    expect(acknowledged.code).toBe(0);
    d = await startDaemonProcess({ home });
    const again = d;
    await until(() => logLines(again, "webhook outbox loaded").length > 0, "the load line");
    expect(lossLines(again)).toEqual([]);
    expect(logLines(again, "webhook outbox loaded")[0]).toMatchObject({ level: "info", recordsMissing: 0 });
    await d.stop();
    d = undefined;
  });

  it("cut to 97 % (a torn tail inside an acknowledged record): told as a loss, not as a write never acknowledged", async () => {
    const home = await copy();
    const p = join(home, JOURNAL);
    await truncate(p, Math.floor((await stat(p)).size * 0.97));
    const whole = (await readFile(p, "utf8")).split("\n").length - 1;
    const missing = lines.length - whole;

    const before = await doctor(home);
    expect(before.code).toBe(1);
    expect(before.journal.filter((f) => f.severity === "error")).toHaveLength(1);
    // The torn tail is part of the loss: no "crash residue, nothing is lost" note beside it.
    expect(before.journal.filter((f) => f.severity === "info")).toEqual([]);

    d = await startDaemonProcess({ home });
    const daemon = d;
    const [loss] = await until(() => lossLines(daemon).length > 0 && lossLines(daemon), "the loss line");
    expect(loss).toMatchObject({ level: "error", file: JOURNAL, recordsMissing: missing });
    const torn = logLines(daemon, "outbox journal ended in a torn line");
    expect(torn).toHaveLength(1);
    expect(torn[0]!.msg).toContain("part of a record it had acknowledged");
    expect(torn[0]!.bytes).toBeGreaterThan(0);
    await d.stop();
    d = undefined;

    const after = await doctor(home);
    expect(after.code).toBe(1);
    expect(after.journal.find((f) => f.severity === "error")?.message).toContain(
      `${missing} acknowledged record${missing === 1 ? "" : "s"} missing`,
    );
  });
});
