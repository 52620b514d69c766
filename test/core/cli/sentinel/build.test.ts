import { describe, expect, it } from "vitest";
import { buildPushEvent } from "../../../../core/cli/sentinel/actions.js";
import { formatUntil } from "../../../../core/cli/sentinel/show.js";
import { buildWatchSpec, parseUntil, prSubject } from "../../../../core/cli/sentinel/watch.js";

describe("svc sentinel watch: the spec it sends", () => {
  it("builds a session-target spec from a subject, types, until, provider and urgency", () => {
    expect(
      buildWatchSpec("ci:*", {
        session: "ses_1",
        types: "ci.build.*, ci.test.*",
        until: "count:3",
        provider: "agentpush",
        urgency: "steer",
        label: "l",
        group: "g",
      }),
    ).toEqual({
      match: [{ subject: "ci:*", types: ["ci.build.*", "ci.test.*"] }],
      until: { kind: "count", n: 3 },
      target: { kind: "session", sessionId: "ses_1", urgency: "steer" },
      provider: "agentpush",
      label: "l",
      group: "g",
    });
  });

  it("turns --pr into the pull request subject and defaults until to subject_terminal (never for a subject)", () => {
    expect(buildWatchSpec(undefined, { session: "s", pr: "https://github.com/acme/api/pull/42" })).toMatchObject({
      match: [{ subject: "github:acme/api#42" }],
      until: { kind: "subject_terminal" },
    });
    expect(buildWatchSpec("x", { session: "s" }).until).toEqual({ kind: "never" });
    expect(prSubject("https://github.com/a/b/pull/7/")).toBe("github:a/b#7");
  });

  it.each([
    [undefined, {}],
    ["x", { pr: "https://github.com/a/b/pull/1" }],
    ["x", { types: " , " }],
    ["x", { until: "count:0" }],
    ["x", { until: "at:yesterday" }],
    ["x", { until: "sometime" }],
    [undefined, { pr: "http://github.com/a/b/pull/1" }],
    [undefined, { pr: "https://github.com/a/b/issues/1" }],
    [undefined, { pr: "not a url" }],
  ])("refuses %j %j as a usage error", (subject, opts) => {
    expect(() => buildWatchSpec(subject as string | undefined, { session: "s", ...opts })).toThrow(
      expect.objectContaining({ code: "usage" }),
    );
  });

  it("parses --until forms, ISO or epoch ms for at", () => {
    expect(parseUntil("never")).toEqual({ kind: "never" });
    expect(parseUntil("subject_terminal")).toEqual({ kind: "subject_terminal" });
    expect(parseUntil("at:1767225600000")).toEqual({ kind: "at", ms: 1767225600000 });
    expect(parseUntil("at:2026-01-01T00:00:00Z")).toEqual({ kind: "at", ms: Date.UTC(2026, 0, 1) });
    expect(formatUntil({ kind: "at", ms: Date.UTC(2026, 0, 1) })).toBe("at:2026-01-01T00:00:00.000Z");
    expect(formatUntil({ kind: "count", n: 2 })).toBe("count:2");
  });
});

describe("svc sentinel push: the event it sends", () => {
  it("uses the given id, the subjects in order, JSON data and terminal; a fresh ULID otherwise", async () => {
    expect(
      await buildPushEvent(["ci:api", "ci:api#1"], { type: "ci.done", id: "b1", data: '{"ok":true}', terminal: true }),
    ).toMatchObject({
      id: "b1",
      type: "ci.done",
      subjects: ["ci:api", "ci:api#1"],
      data: { ok: true },
      terminal: true,
    });
    const e = await buildPushEvent(["s"], { type: "t" });
    expect(e.id).toMatch(/^[0-9A-Z]{26}$/);
    expect(e).not.toHaveProperty("data");
  });

  it("refuses data that is not JSON and ids with a dot", async () => {
    await expect(buildPushEvent(["s"], { type: "t", data: "{" })).rejects.toMatchObject({ code: "usage" });
    await expect(buildPushEvent(["s"], { type: "t", id: "a.b" })).rejects.toMatchObject({ code: "usage" });
  });
});
