import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createHostEgress, type HostEgress } from "../../../../core/egress/host-egress.js";
import { FakeClock, createRandom } from "../../../../core/runtime/clock.js";
import { createMemoryLogger } from "../../../../core/runtime/logger.js";
import { openTeamDatabase, type OpenTeamDatabase } from "../../../../core/store/postgres/database.js";
import { createChallengeVerifier } from "../../../../plugins/webhook-target/challenge.js";
import { Dispatcher } from "../../../../plugins/webhook-target/dispatcher.js";
import { EndpointHealth } from "../../../../plugins/webhook-target/endpoint-health.js";
import { buildEnvelope } from "../../../../plugins/webhook-target/envelope.js";
import { LIMITS } from "../../../../plugins/webhook-target/limits.js";
import type { SentinelView } from "../../../../core/plugin-api/index.js";
import { TEAM_VAULT_WHERE, checkTeamVault } from "../../../../plugins/webhook-target/team/team-vault-check.js";
import { openVault } from "../../../../plugins/webhook-target/open-vault.js";
import { Outbox } from "../../../../plugins/webhook-target/outbox/outbox.js";
import { rotateSecret } from "../../../../plugins/webhook-target/rotation.js";
import { signWithKey } from "../../../../plugins/webhook-target/signer.js";
import {
  TEAM_PRUNE_GRACE_MS,
  openTeamVault,
  type TeamVault,
} from "../../../../plugins/webhook-target/team/team-vault.js";
import { makeTempHome } from "../../../support/cli.js";
import { postgresMissing, startPostgres, type PostgresServer } from "../../../support/postgres.js";
import {
  LOOPBACK_ALLOWED,
  echoChallenge,
  fakeSentinels,
  recordingSleep,
  secretOf,
  startReceiver,
  testContext,
  type Receiver,
} from "../support/harness.js";

const missing = postgresMissing();
if (missing) console.warn(missing);

const FIRST = secretOf(21);

describe.skipIf(!!missing)("webhook secrets in the team store (sealed, shared by the daemons)", () => {
  let server: PostgresServer;
  const key = randomBytes(32);
  const logger = createMemoryLogger();
  let dbs: OpenTeamDatabase[] = [];
  let n = 0;
  let url = "";
  const clock = new FakeClock(Date.now());
  const random = createRandom(clock);

  /** A daemon's pool on this test's database (each daemon has its own). */
  const daemon = async (daemonKey = key) => {
    const db = await openTeamDatabase({ url, key: daemonKey, daemonId: `d${dbs.length}`, logger });
    dbs.push(db);
    return db;
  };
  const vaultOn = async (db: OpenTeamDatabase): Promise<TeamVault> =>
    openTeamVault(db, { random, now: () => clock.now() });

  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.destroy();
  });
  beforeEach(async () => {
    clock.set(Date.now());
    url = await server.createDatabase(`vault_${++n}`);
  });
  afterEach(async () => {
    await Promise.all(dbs.map((db) => db.close()));
    dbs = [];
  });

  it("stores only the sealed secret: the bytes in the table never hold it, in text or base64", async () => {
    const db = await daemon();
    const vault = await vaultOn(db);
    const ref = await vault.put("snt_1", FIRST);
    expect(ref).toMatch(/^swsec_[0-9A-HJKMNP-TV-Z]{26}$/);
    const { rows } = await db.query<{ sealed: Buffer; sentinel_id: string }>(
      "SELECT sealed, sentinel_id FROM webhook_secrets WHERE ref = $1",
      [ref],
    );
    expect(rows).toHaveLength(1);
    const sealed = rows[0]!.sealed;
    expect(Buffer.isBuffer(sealed)).toBe(true);
    const key32 = Buffer.from(FIRST.slice("whsec_".length), "base64");
    for (const needle of [Buffer.from(FIRST), Buffer.from(FIRST.slice(6)), key32, key32.subarray(0, 12)])
      expect(sealed.includes(needle)).toBe(false);
    // Nor does the whole table, read as text.
    const dump = await db.query<{ t: string }>("SELECT row_to_json(w)::text AS t FROM webhook_secrets w");
    expect(dump.rows.map((r) => r.t).join("\n")).not.toContain(FIRST.slice(6, 30));
    expect(await vault.get(ref)).toBe(FIRST);
  });

  it("refuses to open with another key than the team's, with an error naming the key and never the secret", async () => {
    const a = await vaultOn(await daemon());
    const ref = await a.put("snt_1", FIRST);
    const other = await daemon(randomBytes(32));
    const err = await vaultOn(other).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "store_key_mismatch" });
    expect(String((err as Error).message)).toMatch(/team key/);
    expect(String((err as Error).message)).not.toContain(FIRST.slice(6, 20));
    // The same refusal where a secret is read: a vault opened while its table was empty meets a
    // secret sealed with the team's key.
    const empty = await server.createDatabase(`vault_${++n}_empty`);
    const early = await openTeamDatabase({ url: empty, key: randomBytes(32), daemonId: "early", logger });
    dbs.push(early);
    const earlyVault = await vaultOn(early);
    const { rows } = await dbs[0]!.query<{ sealed: Buffer }>("SELECT sealed FROM webhook_secrets WHERE ref = $1", [
      ref,
    ]);
    await early.query("INSERT INTO webhook_secrets (ref, sentinel_id, sealed, created_at) VALUES ($1, $2, $3, $4)", [
      ref,
      "snt_1",
      rows[0]!.sealed,
      1,
    ]);
    await expect(earlyVault.key(ref)).rejects.toMatchObject({ code: "store_key_mismatch" });
  });

  it("shares secrets between two daemons' vaults; removals and values() see the whole team", async () => {
    const [a, b] = [await vaultOn(await daemon()), await vaultOn(await daemon())];
    const ref = await a.put("snt_1", FIRST);
    expect(await b.get(ref)).toBe(FIRST);
    expect(await b.key(ref)).toEqual({ missing: false, key: Buffer.from(FIRST.slice(6), "base64") });
    const second = await b.put("snt_2", secretOf(22));
    expect(await a.get(second)).toBe(secretOf(22));
    expect((await a.values()).sort()).toEqual([FIRST, secretOf(22)].sort());
    await b.removeSentinel("snt_2");
    const fresh = await vaultOn(await daemon());
    expect(await fresh.get(second)).toBeUndefined();
    expect(await fresh.key("swsec_missing")).toEqual({ missing: true });
    const bad = await a.put("snt_3", "whsec_not-base64!");
    expect(await fresh.key(bad)).toEqual({ missing: false, key: undefined });
  });

  it("prunes unreferenced secrets older than the grace period only (another daemon may be mid-creation)", async () => {
    const vault = await vaultOn(await daemon());
    const old = await vault.put("snt_old", FIRST);
    const kept = await vault.put("snt_kept", secretOf(23));
    clock.advance(TEAM_PRUNE_GRACE_MS + 1);
    const young = await vault.put("snt_young", secretOf(24));
    expect(await vault.prune((ref) => ref === kept)).toBe(1);
    const other = await vaultOn(await daemon());
    expect(await other.get(old)).toBeUndefined();
    expect(await other.get(kept)).toBe(secretOf(23));
    expect(await other.get(young)).toBe(secretOf(24));
  });

  it("opens the team vault through openVault(ctx) when the context offers teamDatabase", async () => {
    const { home, cleanup } = await makeTempHome("svc-team-vault-");
    try {
      const db = await daemon();
      const { ctx } = testContext(home, fakeSentinels(), { clock });
      const teamCtx = {
        ...ctx,
        hasService: (name: string) => name === "teamDatabase" || ctx.hasService(name as never),
        service: ((name: string) => (name === "teamDatabase" ? db : ctx.service(name as never))) as typeof ctx.service,
      };
      const vault = openVault(teamCtx);
      const ref = await vault.put("snt_1", FIRST);
      expect(await (await vaultOn(await daemon())).get(ref)).toBe(FIRST);
      expect(await vault.values()).toEqual([FIRST]);
      expect(await openVault(ctx).get(ref)).toBeUndefined();
    } finally {
      await cleanup();
    }
  });

  it("svc doctor's check: fine when every sentinel's secret is there; names a missing secret, a stray one, another key", async () => {
    const db = await daemon();
    const sentinel = (id: string, secretRef: string): SentinelView => ({
      id,
      status: "active",
      createdAt: 0,
      spec: {
        match: [{ subject: "x" }],
        until: { kind: "never" },
        target: { kind: "webhook", url: "https://example.com/h", secretRef },
      },
    });
    expect(await checkTeamVault(db, [])).toEqual([]);
    const vault = await vaultOn(db);
    const ref = await vault.put("snt_a", FIRST);
    expect(await checkTeamVault(db, [sentinel("snt_a", ref)])).toEqual([]);
    await vault.put("snt_gone", secretOf(25));
    const found = await checkTeamVault(db, [sentinel("snt_a", ref), sentinel("snt_b", "swsec_missing")]);
    expect(found.map((f) => [f.severity, f.file, f.message])).toEqual([
      ["error", TEAM_VAULT_WHERE, expect.stringMatching(/^the secret of webhook sentinel snt_b \(swsec_missing\)/)],
      ["info", TEAM_VAULT_WHERE, expect.stringMatching(/^secret swsec_\w+ \(of sentinel snt_gone\)/)],
    ]);
    const other = await openTeamDatabase({ url, key: randomBytes(32), daemonId: "other", logger });
    dbs.push(other);
    const wrongKey = await checkTeamVault(other, [sentinel("snt_a", ref)]);
    expect(wrongKey.map((f) => [f.severity, f.message])).toEqual([
      ["error", expect.stringMatching(/^2 of 2 stored webhook secrets do not open with this daemon's team key/)],
      ["info", expect.stringMatching(/of sentinel snt_gone/)],
    ]);
    expect(JSON.stringify([...found, ...wrongKey])).not.toContain(FIRST.slice(6, 20));
  });

  describe("rotation on one daemon, delivery on another", () => {
    let rx: Receiver;
    let egress: HostEgress;
    let homeB: string;
    let cleanupB: () => Promise<void>;
    beforeEach(async () => {
      rx = await startReceiver();
      rx.handle(echoChallenge());
      egress = createHostEgress({ allowSubnets: () => LOOPBACK_ALLOWED });
      ({ home: homeB, cleanup: cleanupB } = await makeTempHome("svc-team-b-"));
    });
    afterEach(async () => {
      await egress.close();
      await rx.close();
      await cleanupB();
    });

    it("signs B's deliveries with both secrets for the 10-minute window after A rotates, then with the new one", async () => {
      // The sentinel view both daemons read (in team mode: the PostgreSQL sentinel store).
      const sentinels = fakeSentinels();
      const vaultA = await vaultOn(await daemon());
      const vaultB = await vaultOn(await daemon());
      const callback = `https://127.0.0.1:${rx.port}/hook`;
      sentinels.add("snt_r", { kind: "webhook", url: callback, secretRef: await vaultA.put("snt_r", FIRST) });

      const outbox = await Outbox.open({
        home: homeB,
        now: () => clock.now(),
        newId: () => `req_${random.ulid()}`,
        logger,
      });
      const health = new EndpointHealth({ sentinels: () => sentinels, events: () => undefined, clock, logger });
      const dispatcher = new Dispatcher({
        outbox,
        vault: vaultB,
        egress,
        sentinels: () => sentinels,
        health,
        clock,
        sleep: recordingSleep(),
        logger,
      });
      const deliverOnB = async (eventId: string) => {
        const body = buildEnvelope("snt_r", { id: eventId, type: "t.o.a", subjects: ["s:1"] }, clock.now());
        const { row } = await outbox.add({ sentinelId: "snt_r", eventId, body });
        dispatcher.enqueue(row.requestId);
        await dispatcher.idle();
        expect(outbox.get(row.requestId)).toMatchObject({ status: "delivered" });
        const seen = rx.seen.find((s) => s.headers["webhook-id"] === eventId)!;
        const signatures = String(seen.headers["webhook-signature"]).split(" ");
        return {
          signatures,
          /** The real package's signature for this secret is among those sent. */
          signedWith: (secret: string) =>
            signatures.includes(
              new Webhook(secret).sign(
                eventId,
                new Date(Number(seen.headers["webhook-timestamp"]) * 1000),
                seen.body.toString(),
              ),
            ),
          /** The real package's verification (which also wants the timestamp within 5 minutes of now). */
          verifies: (secret: string) => {
            try {
              return !!new Webhook(secret).verify(seen.body.toString(), seen.headers as Record<string, string>);
            } catch {
              return false;
            }
          },
        };
      };
      // Rotated 10 minutes ago less 30 s, so the window's last deliveries carry real-time timestamps.
      clock.set(Date.now() - LIMITS.rotationWindowMs + 30_000);
      try {
        // B signs once before the rotation (it now holds the first secret).
        const before = await deliverOnB("evt_before");
        expect(before.signatures).toHaveLength(1);
        expect(before.signedWith(FIRST)).toBe(true);

        const verifier = createChallengeVerifier({ egress, clock, random, sign: signWithKey });
        const rotated = await rotateSecret(
          { sentinels, vault: vaultA, verifier, clock, random },
          { sentinelId: "snt_r", principal: "token:boot" },
        );
        expect(rotated).toMatchObject({ rotated: true, secret: expect.stringMatching(/^whsec_/) });
        const second = rotated.secret!;

        const early = await deliverOnB("evt_early");
        expect(early.signatures).toHaveLength(2);
        expect(early.signedWith(FIRST)).toBe(true);
        expect(early.signedWith(second)).toBe(true);

        clock.set(rotated.rotatedAt! + LIMITS.rotationWindowMs - 1);
        const during = await deliverOnB("evt_during");
        expect(during.signatures).toHaveLength(2);
        expect(during.verifies(FIRST)).toBe(true);
        expect(during.verifies(second)).toBe(true);

        clock.set(rotated.rotatedAt! + LIMITS.rotationWindowMs);
        const after = await deliverOnB("evt_after");
        expect(after.signatures).toHaveLength(1);
        expect(after.verifies(second)).toBe(true);
        expect(after.verifies(FIRST)).toBe(false);
      } finally {
        await dispatcher.stop(100);
        await outbox.close();
      }
    });
  });
});
