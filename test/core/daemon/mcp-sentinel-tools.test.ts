import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { SentinelService } from "../../../core/sentinels/service.js";
import { sentinelTools } from "../../../core/sentinels/tools.js";
import type { ToolDef } from "../../../core/plugin-api/tools.js";

function harness(overrides: Partial<SentinelService> = {}) {
  const created: unknown[] = [];
  const service = {
    create: async (spec: unknown, principal: string) => {
      created.push({ spec, principal });
      return { id: "snt_1", spec };
    },
    setupProvider: async (_kind: string, input: Record<string, unknown>) => ({
      secretSet: true,
      echoedSecret: input.secret,
      apiKey: "k-123",
    }),
    ...overrides,
  } as unknown as SentinelService;
  const tools = sentinelTools({
    service: () => service,
    resolvePrUrl: async (url) => `github:from/url#${url.split("/").pop()}`,
  });
  const tool = (name: string) => tools.find((t) => t.name === name) as ToolDef;
  const call = (name: string, input: unknown, principal = "loopback") =>
    tool(name).handler(z.object(tool(name).inputSchema).parse(input) as never, { principal });
  return { tools, tool, call, created };
}

describe("sentinel tools", () => {
  it("are the six SPEC.md tools, read-only where they only read", () => {
    const { tools } = harness();
    expect(tools.map((t) => [t.name, t.readOnly === true])).toEqual([
      ["sentinel_watch", false],
      ["sentinel_list", true],
      ["sentinel_unwatch", false],
      ["sentinel_poll_now", false],
      ["list_sentinel_adapters", true],
      ["setup_sentinel_provider", false],
    ]);
  });

  it("sentinel_watch builds a session-target spec; until defaults to subject_terminal", async () => {
    const h = harness();
    await h.call("sentinel_watch", {
      subject: "github:Acme/API#1",
      types: ["github.pull_request.*"],
      sessionId: "ses_1",
      urgency: "steer",
      label: "pr",
    });
    await h.call("sentinel_watch", {
      prUrl: "https://github.com/a/b/pull/9",
      sessionId: "ses_2",
      provider: "webhook",
      until: { kind: "count", n: 2 },
    });
    expect(h.created).toEqual([
      {
        principal: "loopback",
        spec: {
          match: [{ subject: "github:Acme/API#1", types: ["github.pull_request.*"] }],
          until: { kind: "subject_terminal" },
          target: { kind: "session", sessionId: "ses_1", urgency: "steer" },
          label: "pr",
        },
      },
      {
        principal: "loopback",
        spec: {
          match: [{ subject: "github:from/url#9" }],
          until: { kind: "count", n: 2 },
          target: { kind: "session", sessionId: "ses_2" },
          provider: "webhook",
        },
      },
    ]);
  });

  it("sentinel_watch passes idempotencyKey to the service's create (the one rule for every surface)", async () => {
    const seen: unknown[] = [];
    const h = harness({
      create: async (spec, _principal, options) => (seen.push(options), { id: "snt_1", spec }) as never,
    });
    await h.call("sentinel_watch", { subject: "ci:a", sessionId: "ses_1", idempotencyKey: "job-9" }, "token:boot");
    await h.call("sentinel_watch", { subject: "ci:a", sessionId: "ses_1" });
    expect(seen).toEqual([{ idempotencyKey: "job-9" }, {}]);
  });

  it("sentinel_watch refuses neither or both of subject and prUrl, and any target other than a session", async () => {
    const h = harness();
    await expect(h.call("sentinel_watch", { sessionId: "s" })).rejects.toMatchObject({ code: "invalid_input" });
    await expect(
      h.call("sentinel_watch", { sessionId: "s", subject: "x", prUrl: "https://github.com/a/b/pull/1" }),
    ).rejects.toMatchObject({ code: "invalid_input" });
    const shape = z.object(h.tool("sentinel_watch").inputSchema);
    expect(
      shape.safeParse({ subject: "x", sessionId: "s", target: { kind: "webhook", url: "https://x" } }).data,
    ).not.toHaveProperty("target");
    expect(shape.safeParse({ subject: "x" }).success).toBe(false);
    expect(shape.safeParse({ subject: "x", sessionId: "s", urgency: "now" }).success).toBe(false);
    expect(h.created).toEqual([]);
  });

  it("setup_sentinel_provider never shows a secret back, even when a provider's summary would", async () => {
    const h = harness();
    const out = await h.call(
      "setup_sentinel_provider",
      { provider: "webhook", settings: { secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0" } },
      "token:boot",
    );
    expect(out).toEqual({
      provider: "webhook",
      configured: { secretSet: true, echoedSecret: "[redacted]", apiKey: "[redacted]" },
    });
  });
});
