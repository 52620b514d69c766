/**
 * The team store's own check and the webhook target's check of its tables, on a real PostgreSQL
 * opened as `svc doctor` opens it (read-only): what each finds, that nothing can be written, that
 * no finding shows a secret.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../../core/runtime/logger.js";
import { checkSchemaVersions, checkStoredSentinels, checkTeamDaemons } from "../../../../core/store/postgres/check.js";
import { CORE_MIGRATIONS } from "../../../../core/store/postgres/core-schema.js";
import { openTeamDatabase, type OpenTeamDatabase } from "../../../../core/store/postgres/database.js";
import { openReadOnlyTeamDatabase } from "../../../../core/store/postgres/read-only.js";
import { sealSecret } from "../../../../core/store/postgres/secret-box.js";
import { checkTeamTables } from "../../../../plugins/webhook-target/team/check.js";
import { WEBHOOK_MIGRATIONS, WEBHOOK_OWNER } from "../../../../plugins/webhook-target/team/schema.js";
import { postgresMissing, startPostgres, type PostgresServer } from "../../../support/postgres.js";

const missing = postgresMissing();
if (missing) console.warn(missing);

const logger = createLogger({ level: "error" });
const SECRET = "whsec_c2VjcmV0LXRoYXQtbXVzdC1uZXZlci1zaG93";

const sentinel = (id: string, secretRef: string, status = "active") => ({
  id,
  status,
  createdAt: 1,
  updatedAt: 1,
  deliveredCount: 0,
  spec: {
    match: [{ subject: "a" }],
    until: { kind: "never" },
    target: { kind: "webhook", url: "https://127.0.0.1/x", secretRef },
  },
});

describe.skipIf(!!missing)("svc doctor's checks of a team store", () => {
  let server: PostgresServer;
  let url: string;
  let rw: OpenTeamDatabase;
  const key = randomBytes(32);

  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase("checks");
    rw = await openTeamDatabase({ url, key, daemonId: "writer", logger });
    await rw.migrate("core", CORE_MIGRATIONS);
    await rw.migrate(WEBHOOK_OWNER, WEBHOOK_MIGRATIONS);
    for (const s of [sentinel("snt_a", "ref_a"), sentinel("snt_b", "ref_b"), sentinel("snt_c", "ref_c")])
      await rw.query("INSERT INTO svc_sentinels (id, record) VALUES ($1, $2)", [s.id, JSON.stringify(s)]);
    await rw.query("INSERT INTO svc_sentinels (id, record) VALUES ('snt_bad', '{\"id\": \"snt_other\"}')");
    // ref_a sealed with the team key, ref_b with another one, ref_c missing.
    await rw.query("INSERT INTO webhook_secrets VALUES ('ref_a', 'snt_a', $1, 1), ('ref_b', 'snt_b', $2, 1)", [
      rw.seal(SECRET),
      sealSecret(randomBytes(32), SECRET),
    ]);
    const body = Buffer.from('{"id":"e1"}');
    const sha = createHash("sha256").update(body).digest("hex");
    await rw.query(
      `INSERT INTO webhook_outbox (request_id, sentinel_id, event_id, body, body_sha256, status, created_at, updated_at)
       VALUES ('req_ok', 'snt_a', 'e1', $1, $2, 'pending', 1, 1), ('req_bad', 'snt_a', 'e2', $3, $2, 'pending', 2, 2)`,
      [body, sha, Buffer.from('{"id":"e2"}')],
    );
    await rw.query("INSERT INTO svc_daemons (id, host, pid, svc_version) VALUES ('d1', 'box-1', 42, '0.0.1')");
  });
  afterAll(async () => {
    await rw?.close();
    await server?.destroy();
  });

  it("cannot write through the doctor's database, and migrate only compares", async () => {
    const db = await openReadOnlyTeamDatabase({ url, key, logger });
    try {
      await expect(
        db.query("INSERT INTO svc_daemons (id, host, pid, svc_version) VALUES ('x', 'h', 1, 'v')"),
      ).rejects.toThrow(/read-only/);
      await db.migrate("core", [...CORE_MIGRATIONS, "CREATE TABLE never_made (a int)"]);
      expect(db.known.get("core")).toBe(CORE_MIGRATIONS.length + 1);
      expect((await rw.query("SELECT to_regclass('never_made') AS t")).rows[0]!.t).toBeNull();
      await expect(db.migrate(WEBHOOK_OWNER, [])).rejects.toMatchObject({ code: "store_schema_newer" });
    } finally {
      await db.close();
    }
  });

  it("finds the sentinel rows, a row that is not a record, versions and the daemons", async () => {
    const db = await openReadOnlyTeamDatabase({ url, key, logger });
    try {
      const stored = await checkStoredSentinels(db);
      expect(stored.sentinels.map((s) => s.id)).toEqual(["snt_a", "snt_b", "snt_c"]);
      expect(stored.findings).toEqual([
        expect.objectContaining({ severity: "error", message: expect.stringContaining("snt_bad") }),
      ]);
      expect(await checkSchemaVersions(db, new Map([[WEBHOOK_OWNER, WEBHOOK_MIGRATIONS.length]]))).toEqual([]);
      expect(await checkSchemaVersions(db, new Map())).toEqual([
        expect.objectContaining({ severity: "info", message: expect.stringContaining("no plugin this svc loaded") }),
      ]);
      expect(await checkSchemaVersions(db, new Map([[WEBHOOK_OWNER, 0]]))).toEqual([
        expect.objectContaining({ severity: "error", message: expect.stringContaining("upgrade svc") }),
      ]);
      expect(await checkTeamDaemons(db)).toContainEqual(
        expect.objectContaining({ severity: "info", message: expect.stringContaining("box-1 pid 42") }),
      );
    } finally {
      await db.close();
    }
  });

  it("the webhook target's check: a secret another key sealed, a missing secret, a body failing its sha256", async () => {
    const db = await openReadOnlyTeamDatabase({ url, key, logger });
    try {
      const { sentinels } = await checkStoredSentinels(db);
      const findings = await checkTeamTables(db, sentinels);
      const errors = findings.filter((f) => f.severity === "error").map((f) => f.message);
      expect(errors).toEqual([
        expect.stringMatching(
          /1 of 2 stored webhook secrets do not open with this daemon's team key \(ref_b of sentinel snt_b\)/,
        ),
        expect.stringContaining("webhook sentinel snt_c (ref_c) is not in the vault"),
        expect.stringContaining("pending row req_bad (sentinel snt_a, event e2) fails its sha256"),
      ]);
      expect(findings).toContainEqual(
        expect.objectContaining({ severity: "info", message: expect.stringContaining("2 delivery row(s) pending") }),
      );
      expect(JSON.stringify(findings)).not.toContain(SECRET);
    } finally {
      await db.close();
    }
    // Without the key, the secrets are not judged (the store's check says the key is missing).
    const keyless = await openReadOnlyTeamDatabase({ url, key: undefined, logger });
    try {
      const findings = await checkTeamTables(keyless, (await checkStoredSentinels(keyless)).sentinels);
      expect(findings.map((f) => f.message).join("\n")).not.toMatch(/do not open/);
    } finally {
      await keyless.close();
    }
  });
});
