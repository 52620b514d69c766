/**
 * The sentinel engine end to end: the real daemon process (`svc serve`), the real loader
 * loading the recording-target fixture package from the install location, sentinels created
 * through REST and the CLI, events pushed through agentpush (REST and `svc sentinel push`).
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempHome, runCli } from "../support/cli.js";
import { useRecordingDaemon } from "./recording-sandbox.js";

const fx = useRecordingDaemon();

const deliveriesFile = () => join(fx.home, "plugins", "target-recording", "deliveries.jsonl");
async function deliveries(): Promise<Array<{ sentinelId: string; eventId: string; name: string; data?: unknown }>> {
  const text = await readFile(deliveriesFile(), "utf8").catch(() => "");
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}
const delivered = async (id: string) => (await deliveries()).filter((r) => r.sentinelId === id).map((r) => r.eventId);

/** A response's JSON body, loosely typed for assertions. */
const body = async (res: Response): Promise<any> => res.json();
const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
async function create(
  spec: Record<string, unknown>,
): Promise<{ id: string; status: string; spec: Record<string, unknown> }> {
  const res = await fx.daemon.fetch("/sentinels", json(spec));
  expect(res.status, await res.clone().text()).toBe(201);
  return body(res);
}
async function push(
  events: unknown,
): Promise<{ accepted: number; matched: Array<{ sentinelId: string; eventId: string; outcome: string }> }> {
  const res = await fx.daemon.fetch("/providers/agentpush/events", json(events));
  expect(res.status, await res.clone().text()).toBe(200);
  return body(res);
}
const rec = (name: string, extra: Record<string, unknown> = {}) => ({
  match: [{ subject: `job:${name}` }],
  until: { kind: "never" },
  target: { kind: "recording", name },
  ...extra,
});
const cli = (args: string[]) =>
  runCli(["sentinel", ...args], { home: fx.home, env: { SVC_INSTALL_DIR: fx.sandbox.install } });

describe("/sentinels REST", () => {
  it("creates (201, projection), lists, gets with target status, deletes (200) and then 404s", async () => {
    const s = await create(rec("rest", { label: "rest one", group: "g1" }));
    expect(s).toMatchObject({
      status: "active",
      spec: { provider: "agentpush", label: "rest one", target: { kind: "recording", name: "rest", ack: "now" } },
    });
    const list = await body(await fx.daemon.fetch("/sentinels"));
    expect(list.sentinels.map((x: { id: string }) => x.id)).toContain(s.id);
    const got = await fx.daemon.fetch(`/sentinels/${s.id}`);
    expect(got.status).toBe(200);
    expect(await body(got)).toMatchObject({ id: s.id, target: { deliveries: 0 } });
    const del = await fx.daemon.fetch(`/sentinels/${s.id}`, { method: "DELETE" });
    expect([del.status, await body(del)]).toEqual([200, { removed: s.id }]);
    expect((await fx.daemon.fetch(`/sentinels/${s.id}`)).status).toBe(404);
    const again = await fx.daemon.fetch(`/sentinels/${s.id}`, { method: "DELETE" });
    expect([again.status, (await body(again)).error.code]).toEqual([404, "not_found"]);
    const hooks = await readFile(join(fx.home, "plugins", "target-recording", "hooks.jsonl"), "utf8");
    expect(hooks).toContain(`"removed","sentinelId":"${s.id}"`);
  });

  it("answers 400 invalid_input with the zod issues as [{path, message}]", async () => {
    const res = await fx.daemon.fetch(
      "/sentinels",
      json({ match: [], until: { kind: "count", n: 0 }, target: { kind: "recording" } }),
    );
    expect(res.status).toBe(400);
    const err = (await body(res)).error;
    expect(err.code).toBe("invalid_input");
    expect(err.details).toEqual(
      expect.arrayContaining([
        { path: "match", message: expect.any(String) },
        { path: "until.n", message: expect.any(String) },
      ]),
    );
    const target = await body(await fx.daemon.fetch("/sentinels", json(rec("x", { target: { kind: "recording" } }))));
    expect(target.error.details).toEqual([expect.objectContaining({ path: "target.name" })]);
    const notJson = await fx.daemon.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    });
    expect(notJson.status).toBe(400);
  });

  it("an unknown target kind is a 400 listing the loaded target kinds; routine is 501; a refusing target stores nothing", async () => {
    const unknown = await fx.daemon.fetch("/sentinels", json(rec("x", { target: { kind: "pager" } })));
    expect(unknown.status).toBe(400);
    const msg = (await body(unknown)).error.message as string;
    expect(msg).toMatch(/loaded target kinds: .*recording/);
    expect(msg).toMatch(/routine/);
    const routine = await fx.daemon.fetch(
      "/sentinels",
      json(rec("x", { target: { kind: "routine", routineId: "r1" } })),
    );
    expect([routine.status, (await body(routine)).error.code]).toEqual([501, "not_implemented"]);
    const before = (await body(await fx.daemon.fetch("/sentinels"))).sentinels.length;
    const refused = await fx.daemon.fetch(
      "/sentinels",
      json(rec("x", { target: { kind: "recording", name: "x", refuse: true } })),
    );
    expect(refused.status).toBe(403);
    expect((await body(await fx.daemon.fetch("/sentinels"))).sentinels.length).toBe(before);
  });

  it("requires the bearer token, even from loopback, for what sends outward; reads are loopback-or-token", async () => {
    const outward = JSON.stringify(rec("x", { target: { kind: "recording", name: "x" } }));
    for (const [method, path, body] of [
      ["POST", "/sentinels", outward],
      ["POST", "/sentinels", "{}"],
      ["POST", "/providers/agentpush/events", "[]"],
    ]) {
      const res = await fx.daemon.fetch(path!, {
        method: method!,
        auth: false,
        body,
        headers: { "content-type": "application/json" },
      });
      expect(res.status, `${method} ${path} ${body}`).toBe(401);
    }
    const id = (await create(rec("authz"))).id;
    expect((await fx.daemon.fetch(`/sentinels/${id}`, { method: "DELETE", auth: false })).status).toBe(401);
    for (const path of ["/sentinels", `/sentinels/${id}`, "/sentinel-providers"]) {
      expect((await fx.daemon.fetch(path, { auth: false })).status, path).toBe(200);
    }
    await fx.daemon.fetch(`/sentinels/${id}`, { method: "DELETE" });
  });
});

describe("agentpush and delivery", () => {
  it("delivers pushed events to the sentinels that match (exact, prefix, types; OR over clauses)", async () => {
    const exact = await create(rec("a"));
    const prefix = await create({
      ...rec("p"),
      match: [{ subject: "svc:api*" }, { subject: "job:a", types: ["deploy.*"] }],
    });
    const typed = await create({ ...rec("t"), match: [{ subject: "job:a", types: ["ci.*"] }] });
    const r = await push([
      { id: "m1", type: "ci.build.done", subjects: ["job:a"], data: { n: 1 } },
      { id: "m2", type: "deploy.done", subjects: ["job:a"] },
      { id: "m3", type: "x", subjects: ["svc:api", "svc:api#7"] },
      { id: "m4", type: "x", subjects: ["other"] },
    ]);
    expect(r.accepted).toBe(4);
    expect(await delivered(exact.id)).toEqual(["m1", "m2"]);
    expect((await delivered(prefix.id)).sort()).toEqual(["m2", "m3"]);
    expect(await delivered(typed.id)).toEqual(["m1"]);
    expect((await deliveries()).find((x) => x.eventId === "m1")?.data).toEqual({ n: 1 });
  });

  it("rejects malformed pushes with 400 and delivers nothing", async () => {
    const s = await create(rec("bad"));
    for (const input of [
      { id: "a.b", type: "t", subjects: ["job:bad"] },
      { id: "a", type: "t", subjects: [] },
      [],
      { id: "a", subjects: ["job:bad"] },
    ]) {
      const res = await fx.daemon.fetch("/providers/agentpush/events", json(input));
      expect(res.status, JSON.stringify(input)).toBe(400);
      expect((await body(res)).error.details[0]).toEqual({ path: expect.any(String), message: expect.any(String) });
    }
    expect(await delivered(s.id)).toEqual([]);
  });

  it("drops duplicates within a push, across pushes and across a restart (SIGTERM and kill -9)", async () => {
    const s = await create(rec("dup"));
    const deferred = await create({
      ...rec("dup"),
      target: { kind: "recording", name: "dup-deferred", ack: "deferred" },
    });
    const e = (id: string) => ({ id, type: "t", subjects: ["job:dup"] });
    await push([e("d1"), e("d1")]);
    expect((await push(e("d1"))).matched.map((m) => m.outcome)).toEqual(["duplicate", "duplicate"]);
    await fx.daemon.stop();
    await fx.start();
    await push([e("d1"), e("d2")]);
    await fx.daemon.kill9();
    await fx.start();
    await push([e("d1"), e("d2"), e("d3")]);
    expect(await delivered(s.id)).toEqual(["d1", "d2", "d3"]);
    expect(await delivered(deferred.id)).toEqual(["d1", "d2", "d3"]);
    expect((await body(await fx.daemon.fetch(`/sentinels/${s.id}`))).deliveredCount).toBe(3);
  });

  it("until count and subject_terminal end watching; nothing is delivered afterwards", async () => {
    const counted = await create(rec("cnt", { until: { kind: "count", n: 2 } }));
    const term = await create(rec("term", { until: { kind: "subject_terminal" } }));
    const r = await push(["c1", "c2", "c3"].map((id) => ({ id, type: "t", subjects: ["job:cnt"] })));
    expect(r.matched.map((m) => m.outcome)).toEqual(["delivered", "delivered", "expired"]);
    await push({ id: "t1", type: "job.finished", subjects: ["job:term"], terminal: true });
    await push({ id: "t2", type: "t", subjects: ["job:term"] });
    expect(await delivered(counted.id)).toEqual(["c1", "c2"]);
    expect(await delivered(term.id)).toEqual(["t1"]);
    for (const [s, reason] of [
      [counted, "count"],
      [term, "subject_terminal"],
    ] as const) {
      expect(await body(await fx.daemon.fetch(`/sentinels/${s.id}`))).toMatchObject({
        status: "expired",
        endedReason: reason,
      });
      expect(fx.daemon.logs()).toMatch(new RegExp(`ended:expired.*"sentinel":"${s.id}".*"reason":"${reason}"`));
    }
  });

  it("until at: a time that passed while the daemon was down is swept at startup; nothing is delivered", async () => {
    const s = await create(rec("at", { until: { kind: "at", ms: Date.now() + 3_600_000 } }));
    await fx.daemon.stop();
    const file = join(fx.home, "sentinels.json");
    const stored = JSON.parse(await readFile(file, "utf8"));
    stored.sentinels.find((x: { id: string }) => x.id === s.id).spec.until.ms = Date.now() - 1;
    await writeFile(file, JSON.stringify(stored));
    await fx.start();
    expect(fx.daemon.logs()).toMatch(new RegExp(`ended:expired.*"sentinel":"${s.id}".*"reason":"at".*"via":"startup"`));
    const r = await push({ id: "a1", type: "t", subjects: ["job:at"] });
    expect(r.matched).toEqual([]);
    expect(await delivered(s.id)).toEqual([]);
    const hooks = await readFile(join(fx.home, "plugins", "target-recording", "hooks.jsonl"), "utf8");
    expect(hooks).toContain(`"expired","sentinelId":"${s.id}"`);
  });
});

describe("svc sentinel CLI", () => {
  it("watch (session target), list, status, push, poll-now, unwatch through the daemon", async () => {
    const w = await cli([
      "watch",
      "job:cli",
      "--session",
      "ses_cli1",
      "--until",
      "count:5",
      "--label",
      "from cli",
      "--json",
    ]);
    expect(w.code, w.stderr).toBe(0);
    const created = JSON.parse(w.stdout);
    expect(created).toMatchObject({
      status: "active",
      spec: {
        match: [{ subject: "job:cli" }],
        until: { kind: "count", n: 5 },
        target: { kind: "session", sessionId: "ses_cli1" },
      },
    });
    const pr = await cli([
      "watch",
      "--pr",
      "https://github.com/acme/api/pull/42",
      "--session",
      "ses_cli1",
      "--provider",
      "agentpush",
      "--types",
      "github.pull_request.*,github.review.*",
      "--json",
    ]);
    expect(pr.code, pr.stderr).toBe(0);
    expect(JSON.parse(pr.stdout).spec).toMatchObject({
      match: [{ subject: "github:acme/api#42", types: ["github.pull_request.*", "github.review.*"] }],
      until: { kind: "subject_terminal" },
    });
    const list = await cli(["list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      new RegExp(`${created.id}\\s+active\\s+agentpush\\s+job:cli\\s+count:5\\s+session:ses_cli1`),
    );
    const listJson = JSON.parse((await cli(["list", "--json"])).stdout);
    expect(listJson.sentinels.map((s: { id: string }) => s.id)).toContain(created.id);
    const pushed = await cli(["push", "job:cli", "--type", "ci.done", "--id", "cli1", "--data", '{"ok":true}']);
    expect([pushed.code, pushed.stdout.trim()]).toEqual([
      0,
      "pushed cli1: 1 match(es), 1 accepted, 0 duplicate, 0 expired",
    ]);
    const status = await cli(["status", created.id]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/accepted\s+1/);
    expect(status.stdout).toContain("target status:");
    expect(JSON.parse((await cli(["status", created.id, "--json"])).stdout)).toMatchObject({
      id: created.id,
      deliveredCount: 1,
    });
    const poll = await cli(["poll-now", "--json"]);
    expect(poll.code).toBe(0);
    expect(JSON.parse(poll.stdout)).toHaveProperty("polled");
    const un = await cli(["unwatch", created.id]);
    expect([un.code, un.stdout.trim()]).toEqual([0, `removed ${created.id}`]);
    const gone = await cli(["status", created.id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`no sentinel ${created.id}`);
  });

  it("usage errors exit 2; daemon errors exit 1 with the daemon's message", async () => {
    expect((await cli(["watch", "--session", "s"])).code).toBe(2);
    expect((await cli(["watch", "a", "--pr", "https://github.com/a/b/pull/1", "--session", "s"])).code).toBe(2);
    expect((await cli(["watch", "a"])).code).toBe(2);
    expect((await cli(["watch", "a", "--session", "s", "--until", "soon"])).code).toBe(2);
    expect((await cli(["watch", "--pr", "https://example.com/x", "--session", "s"])).code).toBe(2);
    expect((await cli(["push", "a", "--type", "t", "--data", "{"])).code).toBe(2);
    expect((await cli(["push", "a", "--type", "t", "--id", "a.b"])).code).toBe(2);
    const bad = await cli(["watch", "a", "--session", "s", "--provider", "jira"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('unknown provider "jira"');
    const help = await cli(["watch", "--help"]);
    expect([help.code, help.stdout]).toEqual([0, expect.stringContaining("--pr <url>")]);
  });
});

describe("without a daemon", () => {
  it("says clearly that no daemon runs", async () => {
    const other = await makeTempHome();
    try {
      const r = await runCli(["sentinel", "list"], { home: other.home });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/no svc daemon is running .*svc serve/);
    } finally {
      await other.cleanup();
    }
  });
});
