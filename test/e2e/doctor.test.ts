/**
 * `svc doctor` on real homes the real daemon left: one with webhook rows in the outbox snapshot and
 * segment (compacted at a restart) and in the journal (after it), a session-target sentinel whose
 * dedup journal was compacted into a snapshot, the daemon killed; then each damage case of issue 23
 * done to a copy of it.
 */
import { SentinelDedup } from "../../core/sentinels/dedup.js";
import { chmod, cp, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempHome, runCli, startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(40, 5).toString("base64")}`;
const OUTBOX = "sentinel-webhook-outbox.json";
const JOURNAL = "sentinel-webhook-outbox.journal";
const BODIES = "sentinel-webhook-outbox.bodies";
const VAULT = "sentinels-secrets.json";

interface Finding {
  severity: "error" | "warn" | "info";
  file: string;
  message: string;
  fix: string;
}
interface Report {
  healthy: boolean;
  home: string;
  findings: Finding[];
}

const doctor = async (home: string): Promise<{ code: number; report: Report; text: string }> => {
  const r = await runCli(["doctor", "--json"], { home });
  return { code: r.code, report: JSON.parse(r.stdout) as Report, text: r.stdout + r.stderr };
};
const errors = (r: Report) => r.findings.filter((f) => f.severity === "error");

/** Every path under `dir` with its size, mode and mtime (what the doctor must leave as it found it). */
async function listing(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const p = join(e.parentPath ?? (e as unknown as { path: string }).path, e.name);
    const s = await stat(p);
    out.push(`${p} ${s.size} ${s.mode.toString(8)} ${s.mtimeMs}`);
  }
  return out.sort();
}

describe("svc doctor on a home a killed daemon left, and on each damage case", () => {
  let golden: string;
  let cleanup: () => Promise<void>;
  let rx: WebhookReceiver;
  let d: DaemonProcess | undefined;
  let webhookId = "";
  let sessionSentinelId = "";
  const copies: Array<() => Promise<void>> = [];

  const push = async (daemon: DaemonProcess, events: Array<{ id: string; subjects: string[] }>) => {
    const res = await daemon.fetch("/providers/agentpush/events", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(events.map((e) => ({ ...e, type: "doc.item.made", data: { pad: "p".repeat(300) } }))),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  };
  const watch = async (daemon: DaemonProcess, spec: unknown) => {
    const res = await daemon.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(spec),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };

  beforeAll(async () => {
    ({ home: golden, cleanup } = await makeTempHome("svc-e2e-doctor-"));
    await writeFile(join(golden, "config.json"), JSON.stringify(LOOPBACK_CONFIG));
    rx = await startWebhookReceiver([SECRET]);
    // Deliveries are held unanswered: the rows stay pending (their bodies matter to the doctor).
    rx.respond = () => undefined;
    d = await startDaemonProcess({ home: golden });
    webhookId = await watch(d, {
      match: [{ subject: "hook:*" }],
      until: { kind: "never" },
      provider: "agentpush",
      target: { kind: "webhook", url: rx.url, secret: SECRET },
    });
    sessionSentinelId = await watch(d, {
      match: [{ subject: "sess:*" }],
      until: { kind: "never" },
      provider: "agentpush",
      target: { kind: "session", sessionId: "ses_doctor" },
    });
    await push(
      d,
      Array.from({ length: 10 }, (_, i) => ({ id: `h_a${i}`, subjects: ["hook:a"] })),
    );
    await d.stop();
    // The session sentinel's dedup record with a snapshot and a journal after it, written by the
    // engine's own dedup class with a small compaction threshold (the daemon's is 2,000 changes:
    // pushing that many took minutes on a busy machine).
    const dedup = new SentinelDedup(golden, { seen: 1000, compactAfter: 6 });
    for (let i = 0; i < 10; i++) await dedup.recordDelivery(sessionSentinelId, `s_${i}`, "now");
    await dedup.close();
    // The restart compacts the outbox: the first rows go to the snapshot and a segment.
    d = await startDaemonProcess({ home: golden });
    await push(
      d,
      Array.from({ length: 10 }, (_, i) => ({ id: `h_b${i}`, subjects: ["hook:a"] })),
    );
    await push(d, [{ id: "s_last", subjects: ["sess:a"] }]);
    await d.kill9();
    d = undefined;
    await rx.close();
  }, 120_000);
  afterAll(async () => {
    await d?.kill9();
    for (const c of copies) await c();
    await cleanup();
  });

  /** A fresh copy of the golden home (modes and times kept). */
  const copy = async () => {
    const t = await makeTempHome("svc-e2e-doctor-case-");
    copies.push(t.cleanup);
    await cp(golden, t.home, { recursive: true, preserveTimestamps: true });
    return t.home;
  };
  const segment = async (home: string) => (await readdir(join(home, BODIES))).find((f) => f.endsWith(".bin"))!;

  it("the home is as the cases need it: rows in the snapshot, a segment and the journal; a dedup snapshot and journal", async () => {
    const snap = JSON.parse(
      (await readFile(join(golden, OUTBOX), "utf8")).replace(/^\{"version":3,"seq":\d+,"checksum":"[0-9a-f]{8}",/, "{"),
    ) as { rows: unknown[] };
    expect(snap.rows).toHaveLength(10);
    expect(await segment(golden)).toBeDefined();
    expect(
      (await readFile(join(golden, JOURNAL), "utf8")).split("\n").filter((l) => l.includes('"op":"add"')),
    ).toHaveLength(10);
    const dedup = await readdir(join(golden, "sentinels-dedup"));
    expect(dedup).toEqual(expect.arrayContaining([`${sessionSentinelId}.json`, `${sessionSentinelId}.log`]));
  });

  it("a home a killed daemon left, undamaged, is healthy (exit 0), and the doctor writes nothing", async () => {
    const home = await copy();
    const before = await listing(home);
    const { code, report } = await doctor(home);
    expect(report.healthy, JSON.stringify(report.findings, null, 1)).toBe(true);
    expect(code).toBe(0);
    expect(report.home).toBe(home);
    // The stale runtime.json of the killed daemon is a note, not a problem.
    expect(report.findings).toContainEqual(expect.objectContaining({ severity: "info", file: "runtime.json" }));
    expect(await listing(home)).toEqual(before);
    const human = await runCli(["doctor"], { home });
    expect(human.code).toBe(0);
    expect(human.stdout.trim().split("\n").at(-1)).toMatch(/^healthy: 0 error\(s\)/);
  });

  const cases: Array<[string, string | ((home: string) => Promise<string>), (home: string) => Promise<void>]> = [
    ["the outbox snapshot deleted", OUTBOX, (h) => rm(join(h, OUTBOX))],
    [
      "the outbox snapshot truncated",
      OUTBOX,
      async (h) => truncate(join(h, OUTBOX), Math.floor((await stat(join(h, OUTBOX))).size / 2)),
    ],
    [
      "the outbox snapshot edited (a status)",
      OUTBOX,
      async (h) =>
        writeFile(
          join(h, OUTBOX),
          (await readFile(join(h, OUTBOX), "utf8")).replace('"status":"pending"', '"status":"delivered"'),
        ),
    ],
    [
      "a journal line syntax-broken",
      JOURNAL,
      async (h) =>
        writeFile(join(h, JOURNAL), (await readFile(join(h, JOURNAL), "utf8")).replace('"op":"add"', '"op":"add",,')),
    ],
    [
      "a journal key renamed",
      JOURNAL,
      async (h) =>
        writeFile(join(h, JOURNAL), (await readFile(join(h, JOURNAL), "utf8")).replace('"eventId"', '"eventID"')),
    ],
    [
      "the dedup snapshot truncated",
      (h) => Promise.resolve(join("sentinels-dedup", `${sessionSentinelId}.json`)),
      async (h) => truncate(join(h, "sentinels-dedup", `${sessionSentinelId}.json`), 40),
    ],
    [
      "the dedup snapshot deleted",
      (h) => Promise.resolve(join("sentinels-dedup", `${sessionSentinelId}.json`)),
      (h) => rm(join(h, "sentinels-dedup", `${sessionSentinelId}.json`)),
    ],
    [
      "a segment body byte flipped",
      async (h) => join(BODIES, await segment(h)),
      async (h) => {
        const p = join(h, BODIES, await segment(h));
        const data = await readFile(p);
        const at = data.indexOf(Buffer.from('"pad"')) + 10;
        data[at] = data[at]! ^ 0x01;
        await writeFile(p, data);
      },
    ],
    [
      "the vault missing the webhook sentinel's secretRef",
      VAULT,
      async (h) => {
        const v = JSON.parse(await readFile(join(h, VAULT), "utf8")) as { secrets: Record<string, unknown> };
        v.secrets = {};
        await writeFile(join(h, VAULT), JSON.stringify(v));
      },
    ],
    ["the vault file mode 0644", VAULT, (h) => chmod(join(h, VAULT), 0o644)],
  ];

  it.each(cases)("%s: exit 1, not healthy, an error names the file", async (_name, file, damage) => {
    const home = await copy();
    await damage(home);
    const expected = typeof file === "string" ? file : await file(home);
    const { code, report } = await doctor(home);
    expect(code).toBe(1);
    expect(report.healthy).toBe(false);
    expect(
      errors(report).map((f) => f.file),
      JSON.stringify(report.findings, null, 1),
    ).toContain(expected);
    for (const f of errors(report)) expect(f.fix.length).toBeGreaterThan(10);
  });

  it("the vault missing the secretRef names the sentinel and says how to give it a new secret", async () => {
    const home = await copy();
    await writeFile(join(home, VAULT), JSON.stringify({ version: 1, secrets: {} }), { mode: 0o600 });
    const { report } = await doctor(home);
    const f = errors(report).find((x) => x.file === VAULT)!;
    expect(f.message).toContain(webhookId);
    expect(f.fix).toContain(`svc sentinel rotate-secret ${webhookId}`);
  });

  it("the journal cut to 97%: acknowledged records missing, an error naming the journal, with no torn-tail note beside it (issue 42)", async () => {
    const home = await copy();
    const p = join(home, JOURNAL);
    const size = (await stat(p)).size;
    await truncate(p, Math.floor(size * 0.97));
    const { code, report } = await doctor(home);
    // Whether or not the cut fell on a line end, the journal's length record counts more.
    expect(report.findings).toContainEqual(
      expect.objectContaining({
        severity: "error",
        file: JOURNAL,
        message: expect.stringContaining("acknowledged as durable"),
      }),
    );
    expect(report.findings.filter((f) => f.file === JOURNAL && f.severity === "info")).toEqual([]);
    expect(report.healthy).toBe(false);
    expect(code).toBe(1);
  });

  it("damage leaves the files as they were: the doctor moves, copies and truncates nothing", async () => {
    const home = await copy();
    await truncate(join(home, OUTBOX), 100);
    await writeFile(join(home, JOURNAL), (await readFile(join(home, JOURNAL), "utf8")) + "0000 torn");
    const before = await listing(home);
    expect((await doctor(home)).code).toBe(1);
    expect(await listing(home)).toEqual(before);
  });

  it("a running daemon is told as info, and the check still runs", async () => {
    const home = await copy();
    d = await startDaemonProcess({ home });
    try {
      const { report } = await doctor(home);
      expect(report.findings).toContainEqual(
        expect.objectContaining({
          severity: "info",
          file: "runtime.json",
          message: expect.stringContaining(`pid ${d.child.pid}`),
        }),
      );
    } finally {
      await d.kill9();
      d = undefined;
    }
  });

  it("usage errors exit 2", async () => {
    const r = await runCli(["doctor", "--bogus"], { home: golden });
    expect(r.code).toBe(2);
  });
});
