import { describe, expect, it } from "vitest";
import { postgresMissing } from "../support/postgres.js";
import { useTeam } from "../support/team.js";

const missing = postgresMissing();
if (missing) console.warn(missing);

describe.skipIf(!!missing)("team mode: daemons with different schema versions", () => {
  const fx = useTeam(`whsec_${Buffer.alloc(32, 4).toString("base64")}`, { start: false });

  it("a daemon whose code is older than the team's core schema refuses to start and says why; A keeps running", async () => {
    const { team } = fx;
    await team.start(0);
    const version = async () =>
      (await team.sql<{ version: number }>("SELECT version FROM svc_schema_versions WHERE owner = 'core'"))[0]?.version;
    const known = await version();
    expect(known).toBeGreaterThan(0);
    // A newer svc migrated the team: its core version is one past what this code knows.
    await team.sql("UPDATE svc_schema_versions SET version = version + 1, svc_version = '99.0.0' WHERE owner = 'core'");
    const refused = await team.start(1).then(
      () => undefined,
      (err: Error) => err.message,
    );
    expect(refused, "the older daemon started").toBeDefined();
    expect(refused).toMatch(/store_schema_newer|newer than this svc/);
    expect(refused).toContain("99.0.0");
    expect(refused, "the error shows no password").not.toContain(decodeURIComponent(new URL(team.url!).password));
    expect(team.alive(0)).toBe(true);
    expect((await team.daemon(0).fetch("/sentinels")).status).toBe(200);
    expect(await version(), "the refused daemon wrote nothing").toBe(known! + 1);
  }, 120_000);
});
