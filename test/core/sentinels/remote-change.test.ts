/**
 * Two engines of one team (each its own home, one PostgreSQL database): what one creates, ends or
 * removes, the other indexes, watches, unindexes and unwatches (SentinelEngine.applyRemoteChange).
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SENTINEL_STORE } from "../../../core/sentinels/tokens.js";
import { storeModule } from "../../../core/store/module.js";
import { HELD_SECRETS } from "../../../core/redaction/held-secrets.js";
import { resolve } from "../../../core/tokens.js";
import { makeTempHome } from "../../support/cli.js";
import { type PostgresServer, postgresMissing, startPostgres } from "../../support/postgres.js";
import { until } from "../../support/until.js";
import { ev, type Harness, spec, startHarness } from "./harness.js";

const missing = postgresMissing();
if (missing) console.warn(missing);

describe.skipIf(!!missing)("a sentinel changed by another daemon of the team", () => {
  let server: PostgresServer;
  let a: Harness;
  let b: Harness;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    server = await startPostgres();
    const env = { SVC_STORE_URL: server.url(), SVC_STORE_KEY: randomBytes(32).toString("base64") };
    const daemon = async () => {
      const h = await makeTempHome("svc-team-engine-");
      cleanups.push(h.cleanup);
      // Each daemon its own environment, as each process has (the store takes the key out of it).
      return startHarness(h.home, { env: { ...env }, modules: [storeModule] });
    };
    a = await daemon();
    b = await daemon();
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    for (const c of cleanups) await c();
    await server?.destroy();
  });

  it("holds the store URL's password as a secret, so no trace or judge request carries it", async () => {
    const { values } = await resolve(a.c, HELD_SECRETS).values();
    expect(values).toContain(new URL(server.url()).password);
  });

  const gh = (subject: string, extra: Record<string, unknown> = {}) =>
    spec(subject, { provider: "local-gh", ...extra });

  it("is indexed and watched when created elsewhere, so an event arriving here matches it", async () => {
    const p = await a.engine.create(gh("gh:acme/api"), "alice");
    await until(() => (b.rec.watched.includes(p.id) ? true : undefined), "B to watch A's sentinel");
    expect(b.engine.get(p.id)).toMatchObject({ id: p.id, status: "active" });
    await b.engine.ingest("local-gh", [ev("push-1", ["gh:acme/api"], "github.push")]);
    expect(b.rec.delivered.map((d) => [d.sentinelId, d.event.id])).toEqual([[p.id, "push-1"]]);
    expect(b.daemonEvents.some((e) => e.type === "sentinel:created")).toBe(true);
  });

  it("is unindexed and unwatched when it ends elsewhere, and when it is removed elsewhere", async () => {
    const ending = await a.engine.create(gh("gh:acme/ends", { until: { kind: "at", ms: a.clock.now() + 1000 } }), "x");
    const removed = await b.engine.create(gh("gh:acme/gone"), "x");
    await until(
      () => (b.rec.watched.includes(ending.id) && a.rec.watched.includes(removed.id) ? true : undefined),
      "each to watch the other's sentinel",
    );
    a.clock.advance(2000);
    expect(await a.engine.sweep("tick")).toEqual([ending.id]);
    await until(() => (b.rec.hooks.includes(`unwatch:${ending.id}`) ? true : undefined), "B to unwatch it");
    expect(b.engine.get(ending.id)).toMatchObject({ status: "expired", endedReason: "at" });

    await b.engine.remove(removed.id);
    await until(() => (a.rec.hooks.includes(`unwatch:${removed.id}`) ? true : undefined), "A to unwatch it");
    expect(a.engine.get(removed.id)).toBeUndefined();
    // Target hooks ran where the change was made, once.
    expect(a.rec.hooks.filter((h) => h === `removed:${removed.id}`)).toEqual([]);

    const before = b.rec.delivered.length;
    await b.engine.ingest("local-gh", [ev("push-2", ["gh:acme/ends"], "github.push")]);
    await a.engine.ingest("local-gh", [ev("push-3", ["gh:acme/gone"], "github.push")]);
    expect(b.rec.delivered.length).toBe(before);
    expect(a.rec.delivered).toEqual([]);
  });

  // Last: B stops hearing of changes.
  it("ended by another daemon first, it is only unwatched here: its target is told once, by the daemon that ended it", async () => {
    const p = await a.engine.create(gh("gh:acme/race", { until: { kind: "at", ms: a.clock.now() + 1000 } }), "x");
    await until(() => (b.rec.watched.includes(p.id) ? true : undefined), "B to watch it");
    // B misses the news (as while its listener reconnects) and still sees it active when its own sweep runs.
    await resolve(b.c, SENTINEL_STORE).close?.();
    a.clock.advance(2000);
    expect(await a.engine.sweep("tick")).toEqual([p.id]);
    b.clock.advance(b.clock.now() < a.clock.now() ? a.clock.now() - b.clock.now() : 0);
    expect(await b.engine.sweep("tick")).toEqual([]);
    expect(b.rec.hooks).toContain(`unwatch:${p.id}`);
    expect([...a.rec.hooks, ...b.rec.hooks].filter((h) => h === `expired:${p.id}`)).toHaveLength(1);
    const endedOnB = b.daemonEvents.filter(
      (e) => e.type === "sentinel:ended" && (e.data as { sentinelId: string }).sentinelId === p.id,
    );
    expect(endedOnB).toEqual([]);
    expect(b.engine.get(p.id)).toMatchObject({ status: "expired", endedReason: "at" });
  });
});
