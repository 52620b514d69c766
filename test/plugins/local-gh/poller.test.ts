import { describe, expect, it } from "vitest";
import { FakeClock } from "../../../core/runtime/clock.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { Poller } from "../../../plugins/local-gh/poller.js";
import { RecordingIngress, fakeGh, sentinel } from "./helpers.js";

const SINCE = Date.parse("2026-01-10T09:20:00Z");

async function setup(fixture: string, subjects: string[], clock = new FakeClock(SINCE)) {
  const fake = await fakeGh(fixture);
  const ingress = new RecordingIngress([sentinel("snt_1", subjects, SINCE)]);
  const poller = new Poller({
    gh: fake.gh,
    ingress: () => ingress as never,
    clock,
    logger: createMemoryLogger(),
    intervalMs: () => 60_000,
  });
  return { ...fake, ingress, poller, clock };
}

describe("local-gh poller against the fake gh", () => {
  it("baselines on the first poll, sends If-None-Match after (304: nothing new), then ingests only new occurrences", async () => {
    const t = await setup("pr-42", ["github:acme/api#42"]);
    const first = await t.poller.cycle();
    expect(first.errors).toEqual([]);
    // Only the review after the watch started; the 09:00 comment and the 09:15 check run are history.
    expect(t.ingress.ingested.map((e) => [e.id, e.type])).toEqual([
      ["ghev-34567890002", "github.pull_request_review.submitted"],
    ]);
    expect(t.ingress.ingested[0]!.subjects).toEqual(["github:acme/api", "github:acme/api#42"]);

    await t.poller.cycle();
    expect(t.ingress.ingested).toHaveLength(1);
    const calls = await t.calls();
    const second = calls.filter((c) => c.cmd === "api").slice(3);
    expect(second.map((c) => c.headers["if-none-match"])).toEqual(['W/"ev-1"', '"pr-1"', '"cr-1"']);

    await t.poller.cycle();
    expect(t.ingress.ingested.slice(1).map((e) => e.type)).toEqual([
      "github.issue_comment.created",
      "github.check_run.completed",
      "github.pull_request.closed",
    ]);
    const closed = t.ingress.ingested.find((e) => e.type === "github.pull_request.closed")!;
    expect(closed.id).toBe(`ghpr-279147437-closed-${Date.parse("2026-01-10T10:40:00Z")}`);
    expect(closed.data).toMatchObject({ merged: true, number: 42 });
    const check = t.ingress.ingested.find((e) => e.type === "github.check_run.completed")!;
    expect(check.data).toMatchObject({ checkRun: { name: "test (20.x)", conclusion: "failure" } });
    expect(check.subjects).toEqual(["github:acme/api", "github:acme/api#42"]);
    // The repository's own PullRequestEvent for #42 closed is not a second "closed" event.
    expect(t.ingress.ingested.filter((e) => e.type === "github.pull_request.closed")).toHaveLength(1);
    expect(new Set(t.ingress.ingested.map((e) => e.id)).size).toBe(t.ingress.ingested.length);
    for (const e of t.ingress.ingested) expect(e.id).not.toContain(".");
  });

  it("re-polling the same items never yields the same event twice", async () => {
    const t = await setup("pr-42", ["github:acme/api#42"]);
    for (let i = 0; i < 4; i++) await t.poller.cycle();
    const ids = t.ingress.ingested.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(4);
  });

  it("a repository subject gets the repository's pull request events, including closed", async () => {
    const t = await setup("pr-42", ["github:acme/api"]);
    await t.poller.cycle();
    await t.poller.cycle();
    await t.poller.cycle();
    expect(t.ingress.ingested.map((e) => e.id)).toEqual(["ghev-34567890002", "ghev-34567890003", "ghev-34567890005"]);
    const calls = await t.calls();
    expect(calls.every((c) => c.cmd !== "api" || c.path.startsWith("repos/acme/api/events"))).toBe(true);
  });

  it("a pull request already closed at the first poll is reported (it ends until: subject_terminal)", async () => {
    const t = await setup("pr-42", ["github:acme/api#42"]);
    const { writeFile, readFile } = await import("node:fs/promises");
    const api = JSON.parse(await readFile(`${t.dir}/api.json`, "utf8"));
    api["GET repos/acme/api/pulls/42"] = api["GET repos/acme/api/pulls/42"].slice(2);
    await writeFile(`${t.dir}/api.json`, JSON.stringify(api));
    await t.poller.cycle();
    expect(t.ingress.ingested.map((e) => e.type)).toContain("github.pull_request.closed");
  });

  it("backs off on a primary rate limit until the reset, then on a secondary one for Retry-After, then resumes", async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const t = await setup("rate-limit", ["github:acme/api"], clock);
    const r1 = await t.poller.cycle();
    expect(r1.errors[0]).toMatch(/rate limited/);
    expect(t.poller.blockedUntil).toBe(Date.UTC(2026, 0, 1) + 301_000);
    expect(await t.poller.cycle()).toMatchObject({ skipped: "rate_limited" });
    expect((await t.calls()).filter((c) => c.cmd === "api")).toHaveLength(1);
    clock.advance(301_000);
    await t.poller.cycle();
    expect(t.poller.blockedUntil).toBe(clock.now() + 120_000);
    clock.advance(120_000);
    expect((await t.poller.cycle()).errors).toEqual([]);
    expect((await t.calls()).filter((c) => c.cmd === "api")).toHaveLength(3);
  });

  it("a 404 for one subject is reported and does not stop the others", async () => {
    const t = await setup("pr-42", ["github:acme/missing#1", "github:acme/api"]);
    const r = await t.poller.cycle();
    expect(r.errors.join("\n")).toMatch(/acme\/missing.*404/);
    expect(t.ingress.ingested.map((e) => e.id)).toEqual(["ghev-34567890002"]);
  });

  it("polls nothing without active sentinels", async () => {
    const t = await setup("pr-42", []);
    t.ingress.sentinels = [];
    await t.poller.cycle();
    expect(await t.calls()).toEqual([]);
  });
});
