import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MCP_EVENTS_LIMITS as L } from "../../../core/mcp-events/limits.js";
import type { SvcEvent } from "../../../core/plugin-api/index.js";
import { FakeClock } from "../../../core/runtime/clock.js";
import { makeTempHome } from "../../support/cli.js";
import { until } from "../../support/until.js";
import { OWNER, as, rpcFailure, startEventsHarness, type EventsHarness } from "./support/harness.js";

const ev = (n: number, subject = "ci:api", type = "ci.build.finished"): SvcEvent => ({
  id: `evt_${n}`,
  type,
  subjects: [subject],
  data: { n },
});
const sub = { name: "agentpush.event", arguments: { subject: "ci:api*" } };

describe("events/poll", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  let h: EventsHarness;
  let clock: FakeClock;
  const poll = (extra: Record<string, unknown> = {}, caller = OWNER) =>
    h.call("events/poll", { ...sub, ...extra }, caller);
  const ids = (r: Record<string, any>) => (r.events as Array<{ eventId: string }>).map((e) => e.eventId);

  beforeEach(async () => {
    ({ home, cleanup } = await makeTempHome("svc-mcp-poll-"));
    clock = new FakeClock(Date.now());
    h = await startEventsHarness(home, { clock });
  });
  afterEach(async () => {
    await h.stop();
    await cleanup();
  });

  it("a null cursor starts from now: no events, a fresh cursor; the next poll answers exactly what matched since, in order", async () => {
    await h.push([ev(0)]); // before the lease: never seen
    const first = await poll({ cursor: null });
    expect(first).toEqual({
      events: [],
      cursor: expect.any(String),
      hasMore: false,
      nextPollMs: L.nextPollMs,
      truncated: false,
    });
    await h.push([ev(1), ev(2, "ci:web"), ev(3, "ci:api#7"), ev(1)]);
    const next = await poll({ cursor: first.cursor });
    expect(ids(next)).toEqual(["evt_1", "evt_3"]);
    expect(next).toMatchObject({ hasMore: false, truncated: false, nextPollMs: L.nextPollMs });
    expect(next.events[0]).toEqual({
      eventId: "evt_1",
      name: "agentpush.event",
      timestamp: new Date(clock.now()).toISOString(),
      data: { type: "ci.build.finished", subjects: ["ci:api"], payload: { n: 1 } },
      cursor: expect.any(String),
    });
    // Each event's cursor is the position after it: from the first one's, exactly the rest.
    expect(ids(await poll({ cursor: next.events[0].cursor }))).toEqual(["evt_3"]);
    expect(ids(await poll({ cursor: next.cursor }))).toEqual([]);
    // An absent cursor is null.
    expect((await poll()).events).toEqual([]);
  });

  it("matches with the engine's rules: subject prefixes, type globs from the arguments", async () => {
    const typed = { name: "agentpush.event", arguments: { subject: "ci:api", types: ["ci.build.*"] } };
    const start = await h.call("events/poll", typed);
    await h.push([ev(1), ev(2, "ci:api", "ci.deploy.done"), ev(3, "ci:api", "ci.build.started"), ev(4, "ci:apix")]);
    expect(ids(await h.call("events/poll", { ...typed, cursor: start.cursor }))).toEqual(["evt_1", "evt_3"]);
  });

  it("answers at most maxEvents with hasMore, and draining with the cursors gets every event once, in order", async () => {
    const { cursor } = await poll();
    await h.push(Array.from({ length: 25 }, (_, i) => ev(i)));
    const seen: string[] = [];
    let at = cursor;
    for (;;) {
      const r = await poll({ cursor: at, maxEvents: 10 });
      seen.push(...ids(r));
      at = r.cursor;
      if (!r.hasMore) break;
      expect(r.events).toHaveLength(10);
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `evt_${i}`));
    expect((await poll({ cursor: at, maxEvents: 5_000 })).events).toEqual([]);
  });

  it("a cursor past the retention (count) answers what is kept with truncated: true", async () => {
    const { cursor } = await poll();
    await h.push(Array.from({ length: L.pollBufferEvents + 3 }, (_, i) => ev(i)));
    const r = await poll({ cursor, maxEvents: 1 });
    expect(r).toMatchObject({ truncated: true, hasMore: true });
    expect(ids(r)).toEqual(["evt_3"]);
    expect(await poll({ cursor: r.cursor, maxEvents: 1 })).toMatchObject({ truncated: false });
  });

  it("events older than 24 h are dropped (truncated), and maxAgeMs skips older ones (truncated)", async () => {
    const { cursor } = await poll();
    await h.push([ev(1)]);
    clock.advance(60_000);
    await h.push([ev(2)]);
    const aged = await poll({ cursor, maxAgeMs: 30_000 });
    expect(ids(aged)).toEqual(["evt_2"]);
    expect(aged.truncated).toBe(true);
    expect(await poll({ cursor, maxAgeMs: 120_000 })).toMatchObject({
      truncated: false,
      events: [expect.anything(), expect.anything()],
    });
    clock.advance(L.pollBufferMs - 30_000);
    const r = await poll({ cursor });
    expect(ids(r)).toEqual(["evt_2"]);
    expect(r.truncated).toBe(true);
  });

  it("a cursor of another boot is a gap: truncated, no events, a fresh cursor that then works", async () => {
    const { cursor } = await poll();
    await h.stop();
    h = await startEventsHarness(home, { clock });
    const r = await poll({ cursor });
    expect(r).toEqual({
      events: [],
      cursor: expect.any(String),
      hasMore: false,
      nextPollMs: L.nextPollMs,
      truncated: true,
    });
    expect(r.cursor).not.toBe(cursor);
    await h.push([ev(9)]);
    expect(ids(await poll({ cursor: r.cursor }))).toEqual(["evt_9"]);
  });

  it("a lease lapses 10 minutes after its last poll; its cursor is then a gap", async () => {
    const { cursor } = await poll();
    const runtime = await h.runtime();
    clock.advance(L.pollLeaseIdleMs - 1);
    expect((await runtime.sweep()).leasesClosed).toBe(0);
    clock.advance(1);
    expect((await runtime.sweep()).leasesClosed).toBe(1);
    expect(runtime.polls.size()).toBe(0);
    await h.push([ev(1)]);
    expect(await poll({ cursor })).toMatchObject({ events: [], truncated: true });
  });

  it("a long poll answers as soon as a matching event arrives, and an empty one after timeoutMs", async () => {
    const { cursor } = await poll();
    const { polls } = await h.runtime();
    let answered = false;
    const waiting = poll({ cursor, timeoutMs: 30_000 }).finally(() => (answered = true));
    await until(() => (polls.waiting() === 1 ? true : undefined), "a waiting poll");
    await h.push([ev(1, "ci:web")]); // not a match: it keeps waiting
    expect(answered).toBe(false);
    expect(polls.waiting()).toBe(1);
    await h.push([ev(2)]);
    expect(ids(await waiting)).toEqual(["evt_2"]);
    const r = await poll({ cursor: (await waiting).cursor, timeoutMs: 20 });
    expect(r).toMatchObject({ events: [], truncated: false });
  });

  it("a long poll waiting when the daemon stops answers at once", async () => {
    const { cursor } = await poll();
    const waiting = poll({ cursor, timeoutMs: 30_000 });
    const { polls } = await h.runtime();
    await until(() => (polls.waiting() === 1 ? true : undefined), "a waiting poll");
    await h.stop();
    expect(await waiting).toMatchObject({ events: [] });
    h = await startEventsHarness(home, { clock });
  });

  it("a cursor of a lease that lapsed is a gap, answering what the lease made since holds", async () => {
    const { cursor } = await poll();
    clock.advance(L.pollLeaseIdleMs);
    await (await h.runtime()).sweep();
    const fresh = await poll();
    await h.push([ev(1), ev(2)]);
    const r = await poll({ cursor, maxEvents: 1 });
    expect(r).toMatchObject({ truncated: true, hasMore: true });
    expect(ids(r)).toEqual(["evt_1"]);
    expect(ids(await poll({ cursor: r.cursor }))).toEqual(["evt_2"]);
    expect(ids(await poll({ cursor: fresh.cursor }))).toEqual(["evt_1", "evt_2"]);
  });

  it("leases are per caller: another caller's cursor is a gap, and each caller gets its own events", async () => {
    const mine = await poll();
    const theirs = await poll({}, as("remote:pairing:p1:read"));
    await h.push([ev(1)]);
    expect(await poll({ cursor: theirs.cursor })).toMatchObject({ events: [{ eventId: "evt_1" }], truncated: true });
    expect(ids(await poll({ cursor: theirs.cursor }, as("remote:pairing:p1:read")))).toEqual(["evt_1"]);
    expect(ids(await poll({ cursor: mine.cursor }))).toEqual(["evt_1"]);
  });

  it(`keeps at most ${L.pollLeasesPerPrincipal} leases per caller: then -32013 {limit: pollLeases}`, async () => {
    for (let i = 0; i < L.pollLeasesPerPrincipal; i++) await poll({ arguments: { subject: `ci:${i}` } });
    const err = await rpcFailure(poll({ arguments: { subject: "ci:one-more" } }));
    expect(err).toMatchObject({ code: -32013, data: { limit: "pollLeases", max: L.pollLeasesPerPrincipal } });
    await poll({ arguments: { subject: "ci:0" } }); // an existing lease still answers
    await poll({ arguments: { subject: "ci:one-more" } }, as("remote:pairing:p2:read"));
  });

  it("any caller that may read polls, under its own key", async () => {
    for (const p of ["anonymous", "remote:tunnel", "remote:sealed", "loopback", "remote:pairing:p:read"]) {
      expect((await poll({}, as(p))).truncated).toBe(false);
    }
  });

  it.each<[string, Record<string, unknown>, number, Record<string, unknown>]>([
    ["an unknown event type", { name: "nope.never" }, -32011, { kind: "event" }],
    ["arguments the type refuses", { arguments: {} }, -32602, { reason: "invalid_arguments" }],
    ["a cursor svc did not make", { cursor: "bm90IGEgY3Vyc29y" }, -32602, { reason: "invalid_cursor" }],
    ["maxEvents 0", { maxEvents: 0 }, -32602, { reason: "invalid_params" }],
    ["a negative timeoutMs", { timeoutMs: -1 }, -32602, { reason: "invalid_params" }],
    ["no name", { name: undefined }, -32602, { reason: "invalid_params" }],
  ])("refuses %s", async (_n, extra, code, data) => {
    expect(await rpcFailure(poll(extra))).toMatchObject({ code, data });
  });

  it("refuses a cursor ahead of the lease's events (invalid_cursor)", async () => {
    const { cursor } = await poll();
    const [boot, lease] = Buffer.from(cursor, "base64url").toString().split(".");
    expect(await rpcFailure(poll({ cursor: Buffer.from(`${boot}.${lease}.5`).toString("base64url") }))).toMatchObject({
      code: -32602,
      data: { reason: "invalid_cursor" },
    });
  });
});
