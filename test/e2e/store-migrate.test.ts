/**
 * `svc store migrate` and `svc doctor` on a team store, through the real CLI: a home a real daemon
 * left (webhook sentinels with delivered rows and rows the receiver holds pending, and a session
 * sentinel) copied into a real PostgreSQL, checked there, copied back into a fresh home; run
 * twice; and each refusal (wrong password, unreachable server, password on the command line, no
 * key, a running daemon) writes nothing anywhere.
 */
import { randomBytes } from "node:crypto";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempHome, runCli, startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { freePort, postgresMissing, startPostgres, type PostgresServer } from "../support/postgres.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, until, type WebhookReceiver } from "../support/webhook-receiver.js";

const missing = postgresMissing();
if (missing) console.warn(missing);

const SECRET = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
const KEY = randomBytes(32).toString("base64");
const PASSWORD = "svc-test-password";

interface Finding {
  severity: "error" | "warn" | "info";
  file: string;
  message: string;
}
interface Report {
  healthy: boolean;
  store: string;
  findings: Finding[];
}
interface Migrated {
  from: string;
  to: string;
  sentinels: { copied: number; skipped: number };
  targets: Array<{ kind: string; sentinels: number; imported?: Record<string, number>; note?: string }>;
  checks: { source: Report; destination: Report };
  healthy: boolean;
}

/** The URL without its password (what may go on a command line). */
const bare = (url: string) => url.replace(`:${PASSWORD}@`, "@");

/** Every path under `dir` with its size, mode and mtime. */
async function listing(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const p = join(e.parentPath, e.name);
    const s = await stat(p);
    out.push(`${p} ${s.size} ${s.mode.toString(8)} ${s.mtimeMs}`);
  }
  return out.sort();
}

const sort = <T extends { id: string }>(l: T[]) => [...l].sort((a, b) => a.id.localeCompare(b.id));
const sentinelsOf = async (home: string) =>
  (JSON.parse(await readFile(join(home, "sentinels.json"), "utf8")) as { sentinels: Array<{ id: string }> }).sentinels;

describe.skipIf(!!missing)("svc store migrate: a home into PostgreSQL and back", () => {
  let server: PostgresServer;
  let url: string;
  let rx: WebhookReceiver;
  let home: string;
  let back: string;
  let d: DaemonProcess | undefined;
  const cleanups: Array<() => Promise<void>> = [];
  const ids: string[] = [];
  /** sha256 of the body the receiver first saw, by `<sentinel id>|<event id>`. */
  const seen = new Map<string, string>();
  /** Deliveries the receiver holds unanswered (they end when the daemon gives up or stops). */
  const held: ServerResponse[] = [];
  const hold = (_d: unknown, res: ServerResponse) => void held.push(res);

  const cli = (args: string[], h: string, env: NodeJS.ProcessEnv = {}) =>
    runCli(args, { home: h, env: { SVC_STORE_KEY: KEY, ...env }, timeoutMs: 60_000 });
  const migrate = async (h: string, to: string, env: NodeJS.ProcessEnv = {}) => {
    const r = await cli(["store", "migrate", "--to", to, "--json"], h, { PGPASSWORD: PASSWORD, ...env });
    return {
      code: r.code,
      out: JSON.parse(r.stdout) as Migrated & { error?: { code: string; message: string } },
      text: r.stdout + r.stderr,
    };
  };
  const query = async (text: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query(text)).rows;
    } finally {
      await c.end();
    }
  };
  const teamRows = () =>
    query(
      "SELECT request_id, sentinel_id, event_id, status, body_sha256, attempts, created_at, updated_at FROM webhook_outbox ORDER BY request_id",
    ) as Promise<Array<{ sentinel_id: string; event_id: string; status: string; body_sha256: string }>>;
  const table = async (db: string = url) => {
    const c = new pg.Client({ connectionString: db });
    await c.connect();
    try {
      return (
        await c.query<{ id: string; record: unknown; updated_at: Date }>("SELECT * FROM svc_sentinels ORDER BY id")
      ).rows;
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase("team");
    let cleanup: () => Promise<void>;
    ({ home, cleanup } = await makeTempHome("svc-e2e-migrate-"));
    cleanups.push(cleanup);
    ({ home: back, cleanup } = await makeTempHome("svc-e2e-migrate-back-"));
    cleanups.push(cleanup);
    await writeFile(join(home, "config.json"), JSON.stringify(LOOPBACK_CONFIG));
    rx = await startWebhookReceiver([SECRET]);
    d = await startDaemonProcess({ home });
    const watch = async (spec: unknown) => {
      const res = await d!.fetch("/sentinels", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(spec),
      });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: string }).id);
    };
    const push = async (events: Array<{ id: string; subjects: string[] }>) => {
      const res = await d!.fetch("/providers/agentpush/events", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(events.map((e) => ({ ...e, type: "doc.item.made", data: { n: e.id } }))),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    };
    for (const subject of ["hook:a", "hook:b"])
      await watch({
        match: [{ subject }],
        until: { kind: "never" },
        provider: "agentpush",
        target: { kind: "webhook", url: rx.url, secret: SECRET },
      });
    await watch({
      match: [{ subject: "sess:*" }],
      until: { kind: "never" },
      provider: "agentpush",
      target: { kind: "session", sessionId: "ses_migrate" },
    });
    // Delivered rows first, then rows that stay pending.
    await push(Array.from({ length: 4 }, (_, i) => ({ id: `ok_${i}`, subjects: ["hook:a", "hook:b"] })));
    await until(() => rx.deliveries.filter((x) => x.id.startsWith("ok_")).length >= 8, "the first deliveries");
    // The receiver holds them unanswered, so no daemon on this home moves them on (an answered 503
    // would be retried to dead within SPEC.md's 7.5 s of waits; a held attempt lasts its 15 s timeout).
    rx.respond = hold;
    await push(Array.from({ length: 3 }, (_, i) => ({ id: `wait_${i}`, subjects: ["hook:a"] })));
    await until(
      () => new Set(rx.deliveries.filter((x) => x.id.startsWith("wait_")).map((x) => x.id)).size === 3,
      "a first attempt of each pending row",
    );
    await d.stop();
    d = undefined;
    for (const x of rx.deliveries)
      seen.set(`${(JSON.parse(x.body) as { sentinelId: string }).sentinelId}|${x.id}`, x.sha);
  }, 180_000);

  afterAll(async () => {
    await d?.kill9();
    for (const res of held) res.destroy();
    await rx?.close();
    for (const c of cleanups) await c();
    await server?.destroy();
  });

  it("refuses a password on the command line, a wrong password, an unreachable server and no key, writing nothing", async () => {
    const before = await listing(home);
    const withPassword = await migrate(home, url);
    expect(withPassword.code).toBe(1);
    expect(withPassword.out.error?.code).toBe("store_url_invalid");
    expect(withPassword.text).not.toContain(PASSWORD);

    const wrong = await migrate(home, bare(url), { PGPASSWORD: "not-the-password" });
    expect(wrong.out.error?.code).toBe("store_auth_failed");
    expect(wrong.text).not.toContain("not-the-password");

    const port = await freePort();
    const unreachable = await migrate(home, `postgres://svc@127.0.0.1:${port}/team`);
    expect(unreachable.out.error).toMatchObject({ code: "store_unreachable" });
    expect(unreachable.out.error?.message).toContain(`127.0.0.1:${port}/team`);

    const noKey = await migrate(home, bare(url), { SVC_STORE_KEY: "" });
    expect(noKey.out.error?.code).toBe("store_key_missing");

    // Back into files from a store that refuses the login: the fresh home stays empty.
    const wrongBack = await migrate(back, "file", { SVC_STORE_URL: server.urlWithPassword("nope", "team") });
    expect(wrongBack.out.error?.code).toBe("store_auth_failed");
    expect(await readdir(back)).toEqual([]);

    expect(await listing(home)).toEqual(before);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const tables = await c.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
    await c.end();
    expect(tables.rows).toEqual([]);
  });

  it("refuses while a daemon runs on the home", async () => {
    d = await startDaemonProcess({ home });
    try {
      const r = await migrate(home, bare(url));
      expect(r.code).toBe(1);
      expect(r.out.error?.code).toBe("daemon_running");
    } finally {
      await d.stop();
      d = undefined;
    }
  });

  it("copies the sentinels, secrets and rows into PostgreSQL, and svc doctor on the team store is clean", async () => {
    const r = await migrate(home, bare(url));
    expect(r.code, r.text).toBe(0);
    expect(r.out.sentinels).toEqual({ copied: 3, skipped: 0 });
    expect(r.out.targets.find((t) => t.kind === "session")).toMatchObject({
      sentinels: 1,
      note: "nothing of its own to move",
    });
    // 4 events × 2 sentinels delivered, 3 pending; a secret and a trace per webhook sentinel.
    expect(r.out.targets.find((t) => t.kind === "webhook")).toMatchObject({
      sentinels: 2,
      imported: { secrets: 2, rows: 11, pending: 3, traces: 2 },
    });
    expect(r.out.checks.source.findings.filter((f) => f.severity === "error")).toEqual([]);
    expect(r.out.checks.destination.findings.filter((f) => f.severity === "error")).toEqual([]);
    expect(r.out.healthy).toBe(true);
    const rows = await table();
    expect(rows.map((x) => x.record)).toEqual(sort(await sentinelsOf(home)));
    const outbox = await teamRows();
    expect(outbox.map((x) => x.status).sort()).toEqual([...Array(8).fill("delivered"), ...Array(3).fill("pending")]);
    // Each row's body is the one the receiver saw, byte for byte.
    for (const row of outbox) expect(seen.get(`${row.sentinel_id}|${row.event_id}`)).toBe(row.body_sha256);

    const doctor = await cli(["doctor", "--json"], home, { SVC_STORE_URL: url });
    const report = JSON.parse(doctor.stdout) as Report;
    expect(report.findings.filter((f) => f.severity === "error")).toEqual([]);
    expect(doctor.code).toBe(0);
    expect(report.store).toBe(`127.0.0.1:${server.port}/team`);
    expect(report.findings).toContainEqual(
      expect.objectContaining({
        file: "webhook_outbox (team store)",
        message: expect.stringContaining("3 delivery row(s) pending"),
      }),
    );
    expect(report.findings).toContainEqual(
      expect.objectContaining({ file: "svc_daemons (team store)", message: expect.stringContaining("no daemon") }),
    );
  });

  it("running it again changes nothing", async () => {
    const rows = await table();
    const outbox = await teamRows();
    const secrets = await query("SELECT ref, sentinel_id, sealed FROM webhook_secrets ORDER BY ref");
    const r = await migrate(home, bare(url));
    expect(r.code, r.text).toBe(0);
    expect(r.out.sentinels).toEqual({ copied: 0, skipped: 3 });
    expect(r.out.targets.find((t) => t.kind === "webhook")?.imported).toMatchObject({
      secrets: 0,
      rows: 0,
      pending: 0,
    });
    expect(await table()).toEqual(rows);
    expect(await teamRows()).toEqual(outbox);
    expect(await query("SELECT ref, sentinel_id, sealed FROM webhook_secrets ORDER BY ref")).toEqual(secrets);
  });

  it("copies the team store back into a fresh home: the same records, rows, bytes and secrets; again changes nothing", async () => {
    const r = await migrate(back, "file", { SVC_STORE_URL: url });
    expect(r.code, r.text).toBe(0);
    expect(r.out.sentinels).toEqual({ copied: 3, skipped: 0 });
    expect(r.out.targets.find((t) => t.kind === "webhook")).toMatchObject({
      imported: { secrets: 2, rows: 11, pending: 3 },
    });
    expect(sort(await sentinelsOf(back))).toEqual(sort(await sentinelsOf(home)));
    const keep = async () => [
      await readFile(join(back, "sentinels.json")),
      await readFile(join(back, "sentinels-secrets.json")),
    ];
    const files = await keep();
    const again = await migrate(back, "file", { SVC_STORE_URL: url });
    expect(again.out.sentinels).toEqual({ copied: 0, skipped: 3 });
    expect(again.out.targets.find((t) => t.kind === "webhook")?.imported).toMatchObject({ secrets: 0, rows: 0 });
    expect(await keep()).toEqual(files);

    // Through a daemon on the home it came back to: the rows of the team store it was copied from
    // (read there, so no daemon's retries race the reading), and what waited is sent with the same
    // bytes under the same webhook-id, signed with the same secret (the receiver verifies).
    const webhookIds = ids.slice(0, 2);
    const byRequest = (a: { requestId: unknown }, b: { requestId: unknown }) =>
      String(a.requestId).localeCompare(String(b.requestId));
    const status = async (h: string) => {
      const out: unknown[] = [];
      for (const id of webhookIds) {
        const s = await cli(["sentinel", "status", id, "--json"], h);
        const rows = (JSON.parse(s.stdout) as { target: { outbox: { rows: Array<Record<string, unknown>> } } }).target
          .outbox.rows;
        out.push(
          rows
            .map(({ requestId, eventId, status, createdAt, bodyLength }) => ({
              requestId,
              eventId,
              status,
              createdAt,
              bodyLength,
            }))
            .sort(byRequest),
        );
      }
      return out;
    };
    const stored = (await query(
      "SELECT request_id, sentinel_id, event_id, status, created_at, length(body) AS body_length FROM webhook_outbox",
    )) as Array<{
      request_id: string;
      sentinel_id: string;
      event_id: string;
      status: string;
      created_at: string;
      body_length: number;
    }>;
    const before = webhookIds.map((id) =>
      stored
        .filter((r) => r.sentinel_id === id)
        .map((r) => ({
          requestId: r.request_id,
          eventId: r.event_id,
          status: r.status,
          createdAt: Number(r.created_at),
          bodyLength: Number(r.body_length),
        }))
        .sort(byRequest),
    );
    expect(before.flat().filter((r) => r.status === "pending")).toHaveLength(3);
    rx.deliveries.length = 0;
    rx.respond = (_d, res) => res.writeHead(200).end("ok");
    await writeFile(join(back, "config.json"), JSON.stringify(LOOPBACK_CONFIG));
    d = await startDaemonProcess({ home: back });
    try {
      // The rows that waited may already be delivered here (the receiver now answers 200).
      const sameRows = (l: unknown[]) =>
        (l as Array<Array<Record<string, unknown>>>).map((rows) =>
          rows.map((x) => ({ ...x, status: x.status === "pending" ? "delivered" : x.status })),
        );
      expect(sameRows(await status(back))).toEqual(sameRows(before));
      await until(() => rx.deliveries.filter((x) => x.id.startsWith("wait_")).length >= 3, "the pending rows sent");
      for (const x of rx.deliveries) {
        expect(x.verifiedBy).toEqual([0]);
        expect(x.sha).toBe(seen.get(`${(JSON.parse(x.body) as { sentinelId: string }).sentinelId}|${x.id}`));
      }
      expect(rx.unverified).toEqual([]);
    } finally {
      await d.stop();
      d = undefined;
    }
  });

  it("svc doctor names a team store whose schema is newer than this svc, and one that does not answer", async () => {
    const newer = await server.createDatabase("newer");
    const c = new pg.Client({ connectionString: newer });
    await c.connect();
    await c.query(
      "CREATE TABLE svc_schema_versions (owner text PRIMARY KEY, version integer NOT NULL, svc_version text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    await c.query("INSERT INTO svc_schema_versions VALUES ('core', 99, '9.9.9')");
    await c.end();
    const r = await cli(["doctor", "--json"], home, { SVC_STORE_URL: newer });
    expect(r.code).toBe(1);
    expect((JSON.parse(r.stdout) as Report).findings).toContainEqual(
      expect.objectContaining({ severity: "error", message: expect.stringContaining("upgrade svc") }),
    );
    const port = await freePort();
    const gone = await cli(["doctor", "--json"], home, { SVC_STORE_URL: `postgres://svc@127.0.0.1:${port}/team` });
    expect(gone.code).toBe(1);
    expect((JSON.parse(gone.stdout) as Report).findings).toContainEqual(
      expect.objectContaining({
        severity: "error",
        file: "team store",
        message: expect.stringContaining("does not answer"),
      }),
    );
  });
});
