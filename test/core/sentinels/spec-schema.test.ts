import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sentinelSpecSchema } from "../../../core/sentinels/spec-schema.js";
import { defaultProvider } from "../../../core/sentinels/validate.js";
import { makeTempHome } from "../../support/cli.js";
import { spec, startHarness, type Harness } from "./harness.js";

describe("SentinelSpec schema", () => {
  const ok = {
    match: [{ subject: "a" }],
    until: { kind: "never" },
    target: { kind: "session", sessionId: "s1", urgency: "normal" },
  };

  it("accepts each until kind and optional provider, group, label", () => {
    for (const until of [
      { kind: "never" },
      { kind: "subject_terminal" },
      { kind: "at", ms: 1 },
      { kind: "count", n: 3 },
    ]) {
      expect(sentinelSpecSchema.safeParse({ ...ok, until, provider: "local-gh", group: "g", label: "l" }).success).toBe(
        true,
      );
    }
  });

  it.each([
    [{ ...ok, match: [] }, "match"],
    [{ ...ok, match: [{ subject: "" }] }, "match.0.subject"],
    [{ ...ok, match: [{ subject: "a", types: [] }] }, "match.0.types"],
    [{ ...ok, until: { kind: "count", n: 0 } }, "until.n"],
    [{ ...ok, until: { kind: "count", n: 1.5 } }, "until.n"],
    [{ ...ok, until: { kind: "at" } }, "until.ms"],
    [{ ...ok, until: { kind: "soon" } }, "until.kind"],
    [{ ...ok, target: { url: "x" } }, "target.kind"],
    [{ ...ok, provider: "Not A Slug" }, "provider"],
    [{ ...ok, extra: 1 }, ""],
  ])("rejects %j at %s", (input, path) => {
    const r = sentinelSpecSchema.safeParse(input);
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => i.path.join("."))).toContain(path);
  });

  it("defaults the provider to local-gh for github: subjects, agentpush otherwise", () => {
    expect(defaultProvider([{ subject: "github:acme/api#1" }, { subject: "github:acme/*" }])).toBe("local-gh");
    expect(defaultProvider([{ subject: "github:acme/api" }, { subject: "ci:build" }])).toBe("agentpush");
  });
});

describe("spec validation against the loaded plugins", () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    const t = await makeTempHome("svc-sentinel-spec-");
    cleanup = t.cleanup;
    h = await startHarness(t.home);
  });
  afterEach(async () => {
    await h.stop();
    await cleanup();
  });

  it("an unknown target kind is invalid_input listing the loaded target kinds", async () => {
    await expect(h.engine.create(spec("a", { target: { kind: "pager" } }), "loopback")).rejects.toMatchObject({
      code: "invalid_input",
      message: expect.stringContaining("loaded target kinds: test, routine"),
      details: [{ path: "target.kind", message: expect.stringContaining('unknown target kind "pager"') }],
    });
  });

  it("the target plugin's inputSchema validates the target, with paths under `target`", async () => {
    await expect(h.engine.create(spec("a", { target: { kind: "test" } }), "loopback")).rejects.toMatchObject({
      code: "invalid_input",
      details: [expect.objectContaining({ path: "target.name" })],
    });
  });

  it("an unknown provider is invalid_input listing the loaded providers", async () => {
    await expect(h.engine.create(spec("a", { provider: "jira" }), "loopback")).rejects.toMatchObject({
      code: "invalid_input",
      details: [{ path: "provider", message: expect.stringContaining("loaded providers: local-gh, agentpush") }],
    });
  });

  it("normalizes subjects through the provider's resolveSubject and reports what it refuses", async () => {
    const p = await h.engine.create(spec(["github:Acme/API#1", "github:Acme/*"], { provider: "local-gh" }), "loopback");
    expect(p.spec.match.map((m) => m.subject)).toEqual(["github:acme/api#1", "github:acme/*"]);
    await expect(h.engine.create(spec(["ok", "not ok"], { provider: "local-gh" }), "loopback")).rejects.toMatchObject({
      code: "invalid_input",
      details: [{ path: "match[1].subject", message: expect.stringContaining("subjects have no spaces") }],
    });
  });

  it("zod issues come back as a list of {path, message}", async () => {
    const err = await h.engine
      .create({ match: [{ subject: 3 }], until: { kind: "count" } }, "loopback")
      .catch((e) => e);
    expect(err.code).toBe("invalid_input");
    expect(err.details.map((d: { path: string }) => d.path).sort()).toEqual(["match[0].subject", "target", "until.n"]);
  });
});
