import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTeamDatabase, type OpenTeamDatabase } from "../../../../core/store/postgres/database.js";
import { createLogger } from "../../../../core/runtime/logger.js";
import { postgresMissing, startPostgres, type PostgresServer } from "../../../support/postgres.js";

const missing = postgresMissing();
if (missing) console.warn(missing);

describe.skipIf(!!missing)("team database", () => {
  let server: PostgresServer;
  let db: OpenTeamDatabase;
  const key = randomBytes(32);
  const logger = createLogger({ level: "error" });

  beforeAll(async () => {
    server = await startPostgres();
    db = await openTeamDatabase({ url: server.url(), key, daemonId: "test-1", logger });
  });
  afterAll(async () => {
    await db?.close();
    await server?.destroy();
  });

  it("migrates each owner once and refuses a newer schema", async () => {
    await db.migrate("t", ["CREATE TABLE t1 (a int)"]);
    await db.migrate("t", ["CREATE TABLE t1 (a int)", "CREATE TABLE t2 (b int)"]);
    await db.migrate("t", ["CREATE TABLE t1 (a int)", "CREATE TABLE t2 (b int)"]);
    expect((await db.query("SELECT version FROM svc_schema_versions WHERE owner = 't'")).rows).toEqual([
      { version: 2 },
    ]);
    await expect(db.migrate("t", ["CREATE TABLE t1 (a int)"])).rejects.toMatchObject({ code: "store_schema_newer" });
  });

  it("commits a transaction, and rolls it back on a throw", async () => {
    await db.query("CREATE TABLE tx (a int)");
    await db.tx(async (sql) => void (await sql.query("INSERT INTO tx VALUES (1)")));
    await expect(
      db.tx(async (sql) => {
        await sql.query("INSERT INTO tx VALUES (2)");
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    expect((await db.query("SELECT a FROM tx")).rows).toEqual([{ a: 1 }]);
  });

  it("seals secrets with the team key, and a wrong key cannot open them", async () => {
    const sealed = db.seal("whsec_abc");
    expect(sealed.includes(Buffer.from("whsec_abc"))).toBe(false);
    expect(db.unseal(sealed)).toBe("whsec_abc");
    const other = await openTeamDatabase({ url: server.url(), key: randomBytes(32), daemonId: "test-2", logger });
    try {
      expect(() => other.unseal(sealed)).toThrow(expect.objectContaining({ code: "store_key_mismatch" }));
    } finally {
      await other.close();
    }
  });

  it("names a wrong password without showing it", async () => {
    const err = await openTeamDatabase({ url: server.urlWithPassword("wrong-pw"), key, daemonId: "x", logger }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: "store_auth_failed" });
    expect(String((err as Error).message)).not.toContain("wrong-pw");
  });
});
