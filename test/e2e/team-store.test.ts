/**
 * Team mode with real daemons on one real PostgreSQL: a sentinel created on one daemon is listed,
 * matched and removable on the other; a daemon whose store cannot be used (wrong URL, password,
 * port, database, key, a newer schema) refuses to start, says why, and writes nothing in its home.
 */
import { randomBytes } from "node:crypto";
import { chmod, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DaemonProcess, makeTempHome, runCli, startDaemonProcess } from "../support/cli.js";
import { freePort, type PostgresServer, postgresMissing, startPostgres } from "../support/postgres.js";
import { until } from "../support/until.js";

const missing = postgresMissing();
if (missing) console.warn(missing);

const json = (body: unknown) => ({
  method: "POST",
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" },
});

describe.skipIf(!!missing)("team mode: two daemons on one PostgreSQL", () => {
  let server: PostgresServer;
  let url: string;
  const key = randomBytes(32).toString("base64");
  const homes: Array<() => Promise<void>> = [];
  const daemons: DaemonProcess[] = [];

  const home = async () => {
    const h = await makeTempHome("svc-e2e-team-");
    homes.push(h.cleanup);
    return h.home;
  };
  const teamDaemon = async () => {
    const d = await startDaemonProcess({ home: await home(), env: { SVC_STORE_URL: url, SVC_STORE_KEY: key } });
    daemons.push(d);
    return d;
  };

  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase("team");
  });
  afterAll(async () => {
    for (const d of daemons) await d.stop();
    for (const c of homes) await c();
    await server?.destroy();
  });

  it("lists on B a sentinel created on A, matches a push at B, and a removal on B reaches A", async () => {
    const [a, b] = [await teamDaemon(), await teamDaemon()];
    const status = (await (await a.fetch("/status")).json()) as { store: unknown };
    expect(status.store).toEqual({ kind: "postgres", where: `127.0.0.1:${server.port}/team` });
    expect(JSON.stringify(status)).not.toContain("svc-test-password");

    const created = await a.fetch(
      "/sentinels",
      json({
        match: [{ subject: "ci:acme/api" }],
        until: { kind: "never" },
        target: { kind: "session", sessionId: "ses_elsewhere" },
        provider: "agentpush",
        label: "team",
      }),
    );
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const listed = await until(async () => {
      const list = (await (await b.fetch("/sentinels")).json()) as { sentinels: Array<{ id: string }> };
      return list.sentinels.find((s) => s.id === id);
    }, "B to list A's sentinel");
    expect(listed).toMatchObject({ id, status: "active" });

    // B indexed it: a push at B matches it (its session runs nowhere, so the event is parked).
    const push = await b.fetch(
      "/providers/agentpush/events",
      json({ id: "build-1", type: "ci.build.failed", subjects: ["ci:acme/api"] }),
    );
    expect(push.status).toBe(200);
    const onB = await until(async () => {
      const s = (await (await b.fetch(`/sentinels/${id}`)).json()) as {
        target?: { parked?: number; parkedEvents?: unknown[] };
      };
      return s.target?.parked === 1 ? s : undefined;
    }, "B to deliver the push to A's sentinel");
    expect(onB.target?.parkedEvents).toMatchObject([{ eventId: "build-1" }]);

    expect((await b.fetch(`/sentinels/${id}`, { method: "DELETE" })).status).toBeLessThan(300);
    await until(async () => ((await a.fetch(`/sentinels/${id}`)).status === 404 ? true : undefined), "A to drop it");
  });

  it("svc start --store hands the URL to the daemon outside its arguments; PGPASSWORD gives the password", async () => {
    const h = await home();
    const bare = url.replace(/:[^:@/]*@/, "@");
    expect(bare).not.toContain("svc-test-password");
    const env = { PGPASSWORD: "svc-test-password", SVC_STORE_KEY: key };
    // --port 0: the default port (18790) may be another suite's on a shared machine.
    const started = await runCli(["start", "--port", "0", "--store", bare], { home: h, env });
    expect(started.code, started.stderr).toBe(0);
    try {
      const status = await runCli(["status", "--json"], { home: h });
      const s = JSON.parse(status.stdout);
      expect(s.store).toEqual({ kind: "postgres", where: `127.0.0.1:${server.port}/team` });
      const argv = await readFile(`/proc/${s.pid}/cmdline`, "utf8");
      expect(argv).toContain("serve");
      expect(argv).not.toContain("postgres:");
      const human = await runCli(["status"], { home: h });
      expect(human.stdout).toMatch(new RegExp(`store\\s+team PostgreSQL at 127\\.0\\.0\\.1:${server.port}/team`));
      // Read once at start, the key and the password are not in the environment of what the daemon starts.
      const term = await runCli(["sessions", "terminal", "--cwd", h, "--json", "--", "sleep", "120"], { home: h });
      expect(term.code, term.stderr).toBe(0);
      const { descriptor } = JSON.parse(term.stdout) as { descriptor: { id: string; pid: number } };
      try {
        const childEnv = (await readFile(`/proc/${descriptor.pid}/environ`, "utf8")).split("\0");
        expect(childEnv.some((v) => v.startsWith("SVC_SESSION_ID=") || v.startsWith("HOME="))).toBe(true);
        expect(childEnv.filter((v) => /^(SVC_STORE_KEY|PGPASSWORD)=/.test(v))).toEqual([]);
        expect(childEnv.join("\n")).not.toContain("svc-test-password");
        expect(childEnv.join("\n")).not.toContain(key);
      } finally {
        await runCli(["sessions", "stop", descriptor.id], { home: h });
      }
      // Its connections cut, the daemon connects again with the password it read at start.
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        const cut = await admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND application_name LIKE 'svc %'",
        );
        expect(cut.rowCount).toBeGreaterThan(0);
      } finally {
        await admin.end();
      }
      const create = ["sentinel", "create", "--target", "session", "--target-json", '{"sessionId":"ses_pw"}'];
      await until(
        async () => (await runCli([...create, "--subject", "ci:pw", "--json"], { home: h })).code === 0 || undefined,
        "a sentinel created over a new connection",
      );
    } finally {
      expect((await runCli(["stop"], { home: h })).code).toBe(0);
    }
  });

  describe("a daemon whose team store cannot be used refuses to start, says why, writes nothing", () => {
    const refuses = async (env: NodeJS.ProcessEnv, why: RegExp, args: string[] = []) => {
      const h = await home();
      const r = await runCli(["serve", "--port", "0", ...args], { home: h, env });
      expect(r.code, r.stdout + r.stderr).not.toBe(0);
      expect(r.stderr).toMatch(why);
      expect(await readdir(h)).toEqual([]);
      return r;
    };

    it("a URL that is not PostgreSQL's", async () => {
      await refuses(
        { SVC_STORE_URL: "mysql://svc@127.0.0.1/team", SVC_STORE_KEY: key },
        /env SVC_STORE_URL is "mysql:\/\/svc@127\.0\.0\.1\/team", which is not a PostgreSQL URL.*allowed: postgres:\/\//,
      );
    });

    it("a --store URL with a password", async () => {
      const r = await refuses({ SVC_STORE_KEY: key }, /--store carries a password.*PGPASSWORD/, ["--store", url]);
      expect(r.stderr).not.toContain("svc-test-password");
    });

    it("a wrong password", async () => {
      const r = await refuses(
        { SVC_STORE_URL: server.urlWithPassword("not-the-password", "team"), SVC_STORE_KEY: key },
        new RegExp(`team store at 127\\.0\\.0\\.1:${server.port}/team refused the login`),
      );
      expect(r.stderr).not.toContain("not-the-password");
    });

    it("a server that cannot be reached", async () => {
      const port = await freePort();
      await refuses(
        { SVC_STORE_URL: `postgres://svc@127.0.0.1:${port}/team`, SVC_STORE_KEY: key },
        new RegExp(`team store at 127\\.0\\.0\\.1:${port}/team cannot be reached`),
      );
    });

    it("a database that does not exist", async () => {
      await refuses({ SVC_STORE_URL: server.url("absent"), SVC_STORE_KEY: key }, /has no such database/);
    });

    it("no team key, or a key file others may read", async () => {
      await refuses({ SVC_STORE_URL: url }, /team mode needs the team key.*svc store keygen <file>/);
      const dir = await home();
      const keyFile = join(dir, "team.key");
      const made = await runCli(["store", "keygen", keyFile], { home: dir });
      expect(made).toMatchObject({ code: 0, stdout: `${keyFile}\n` });
      await chmod(keyFile, 0o644);
      await refuses(
        { SVC_STORE_URL: url, SVC_STORE_KEY_FILE: keyFile },
        new RegExp(`the team key file ${keyFile} \\(env SVC_STORE_KEY_FILE\\) has mode 0644`),
      );
    });

    it("a schema newer than it knows (the older daemon refuses)", async () => {
      const newer = await server.createDatabase("newer");
      await teamDaemonOn(newer);
      const c = new pg.Client({ connectionString: newer });
      await c.connect();
      await c.query("UPDATE svc_schema_versions SET version = 99, svc_version = '99.0.0' WHERE owner = 'core'");
      await c.end();
      await refuses(
        { SVC_STORE_URL: newer, SVC_STORE_KEY: key },
        /core schema is version 99 \(written by svc 99\.0\.0\), newer than this svc .* knows/,
      );
    });

    const teamDaemonOn = async (db: string) => {
      const d = await startDaemonProcess({ home: await home(), env: { SVC_STORE_URL: db, SVC_STORE_KEY: key } });
      await d.stop();
    };
  });

  // Last: it stops the server the tests above share.
  it("survives a PostgreSQL restart: writes get 503 store_unreachable meanwhile, then work, and B catches up", async () => {
    const [a, b] = [await teamDaemon(), await teamDaemon()];
    const spec = (subject: string) =>
      json({
        match: [{ subject }],
        until: { kind: "never" },
        target: { kind: "session", sessionId: "ses_elsewhere" },
        provider: "agentpush",
      });
    await server.stop("fast");
    const during = await a.fetch("/sentinels", spec("ci:during"));
    expect(during.status).toBe(503);
    expect(await during.json()).toMatchObject({ error: { code: "store_unreachable" } });
    expect((await a.fetch("/sentinels")).status).toBe(200);
    await server.start();
    const created = await until(async () => {
      const r = await a.fetch("/sentinels", spec("ci:after"));
      return r.status === 201 ? ((await r.json()) as { id: string }) : undefined;
    }, "A to write again once PostgreSQL is back");
    await until(async () => {
      const list = (await (await b.fetch("/sentinels")).json()) as { sentinels: Array<{ id: string }> };
      return list.sentinels.some((s) => s.id === created.id) || undefined;
    }, "B to hear of it after its listener reconnected");
    for (const d of [a, b]) expect(d.child.exitCode).toBeNull();
  });
});
