/**
 * The events catalog (issue 27): the loaded providers' event types, merged by name in a stable
 * order, with a `provider` argument and a readiness-based default where several offer a name;
 * resolved clauses create sentinels the real engine accepts and that receive matching events.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { McpRpcError } from "../../../core/daemon/mcp/extensions.js";
import { EVENT_CATALOG, type EventCatalog } from "../../../core/mcp-events/catalog-types.js";
import { eventCatalogModule } from "../../../core/mcp-events/catalog-module.js";
import { defineProvider, type AnyPlugin, type ProviderEventType } from "../../../core/plugin-api/index.js";
import { SENTINEL_PLUGINS } from "../../../core/sentinels/tokens.js";
import { resolve } from "../../../core/tokens.js";
import localGh from "../../../plugins/local-gh/index.js";
import webhookProvider from "../../../plugins/webhook-provider/index.js";
import { mapGithubEvent } from "../../../plugins/github-common/index.js";
import { makeTempHome } from "../../support/cli.js";
import { undescribedProperties } from "../../support/json-schema.js";
import { startHarness, testPlugins, type Harness } from "../sentinels/harness.js";

const oneType = (name: string, extra: Partial<ProviderEventType> = {}): ProviderEventType => ({
  name,
  description: `the ${name} events`,
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
  payloadSchema: { type: "object", description: "d" },
  toMatch: () => [{ subject: `${name}:x` }],
  ...extra,
});

let eventTypesCalls = 0;
/** Providers with vocabularies of their own: one that throws, one with an unusable entry, one sharing a name. */
const vocabularyProviders = (): AnyPlugin[] => [
  defineProvider({
    kind: "broken",
    setup: () => ({
      defaultTypes: () => ["*"],
      readiness: async () => ({ ready: true, detail: "" }),
      eventTypes: () => {
        eventTypesCalls++;
        throw new Error("vocabulary file is corrupt");
      },
    }),
  }),
  defineProvider({
    kind: "mixed",
    setup: () => ({
      defaultTypes: () => ["*"],
      readiness: async () => ({ ready: true, detail: "" }),
      eventTypes: () => [
        oneType("Not.Lower"),
        oneType("mixed.reserved", {
          inputSchema: { type: "object", properties: { provider: { type: "string", description: "x" } } },
        }),
        oneType("mixed.fine"),
        oneType("aaa.first"),
      ],
    }),
  }),
];

let home: string;
let cleanup: () => Promise<void>;
let h: Harness;
let catalog: EventCatalog;

beforeEach(async () => {
  ({ home, cleanup } = await makeTempHome("svc-event-catalog-"));
  eventTypesCalls = 0;
  h = await startHarness(home, {
    plugins: (rec) => [
      ...testPlugins(rec).filter((p) => !(p.type === "provider" && p.kind === "local-gh")),
      localGh,
      webhookProvider,
      ...vocabularyProviders(),
    ],
  });
  await eventCatalogModule.start(h.c);
  catalog = resolve(h.c, EVENT_CATALOG);
});
afterEach(async () => {
  await h.stop();
  await cleanup();
});

const rpcError = async (p: Promise<unknown>): Promise<McpRpcError> => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpRpcError);
  return err as McpRpcError;
};

const setWebhookSecret = async () => {
  const webhook = await resolve(h.c, SENTINEL_PLUGINS).provider("webhook");
  await webhook.configure!({ secret: "s3cret-s3cret-s3cret" });
};

describe("events catalog: events/list", () => {
  it("lists every loaded provider's event types by name, each once, with both delivery modes", async () => {
    const list = await catalog.list();
    const names = list.map((e) => e.name);
    expect(names).toEqual([...names].sort());
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(
      expect.arrayContaining([
        "aaa.first",
        "agentpush.event",
        "github.pull_request",
        "github.workflow_run",
        "github.issues",
        "mixed.fine",
      ]),
    );
    for (const e of list) {
      expect(e.delivery).toEqual(["webhook", "poll"]);
      expect(e.inputSchema.type).toBe("object");
      expect(e.payloadSchema).toMatchObject({ type: "object", required: ["type", "subjects", "payload"] });
    }
    expect(await catalog.list()).toEqual(list);
  });

  it("publishes the occurrence data around the provider's payload schema, every property described", async () => {
    const pr = (await catalog.list()).find((e) => e.name === "github.pull_request")!;
    const payload = (pr.payloadSchema.properties as any).payload;
    expect(payload.anyOf[0].properties.mergedAt.description).toMatch(/merged/);
    expect(payload.anyOf[1].properties.summary.description).toMatch(/left out/);
    for (const e of (await catalog.list()).filter(
      (x) => x.name.startsWith("github.") || x.name.startsWith("agentpush."),
    )) {
      expect(undescribedProperties(e.inputSchema), e.name).toEqual([]);
      expect(undescribedProperties(e.payloadSchema), e.name).toEqual([]);
    }
  });

  it("merges a name several providers offer into one entry with a provider argument stating the default", async () => {
    const list = await catalog.list();
    const pr = list.find((e) => e.name === "github.pull_request")!;
    expect((pr.inputSchema.properties as any).provider).toMatchObject({
      type: "string",
      enum: ["local-gh", "webhook"],
    });
    expect((pr.inputSchema.properties as any).provider.description).toBe(
      "Which provider delivers the events. Served by local-gh, webhook; default: webhook when a GitHub webhook secret is configured (svc sentinel providers setup webhook --secret secret, or the MCP tool setup_sentinel_provider), else local-gh.",
    );
    expect(pr.description).toMatch(/default: webhook when a GitHub webhook secret is configured/);
    // Only the webhook provider sees workflow runs: no choice to make.
    const wr = list.find((e) => e.name === "github.workflow_run")!;
    expect(wr.inputSchema.properties).not.toHaveProperty("provider");
  });

  it("leaves out a provider whose eventTypes throws, logging it once, and unusable entries of another", async () => {
    const first = await catalog.list();
    await catalog.list();
    expect(eventTypesCalls).toBe(2);
    expect(first.some((e) => e.name.startsWith("broken"))).toBe(false);
    expect(first.map((e) => e.name)).not.toContain("mixed.reserved");
    expect(first.map((e) => e.name)).not.toContain("Not.Lower");
    const warned = h.logs.filter((l) => l.includes("left out of events/list"));
    expect(warned.filter((l) => l.includes("vocabulary file is corrupt"))).toHaveLength(1);
    expect(warned.some((l) => l.includes('the argument name \\"provider\\" is reserved'))).toBe(true);
    expect(warned.some((l) => l.includes("is not lower-case and dotted"))).toBe(true);
  });
});

describe("events catalog: resolve", () => {
  it("defaults a shared GitHub name to local-gh until a webhook secret is configured, then to webhook", async () => {
    const args = { repository: "Acme/API", pullRequest: 42 };
    expect(await catalog.resolve("github.pull_request", args)).toEqual({
      name: "github.pull_request",
      provider: "local-gh",
      match: [{ subject: "github:acme/api#42", types: ["github.pull_request.*"] }],
    });
    await setWebhookSecret();
    expect((await catalog.resolve("github.pull_request", args)).provider).toBe("webhook");
    expect((await catalog.resolve("github.pull_request", { ...args, provider: "local-gh" })).provider).toBe("local-gh");
  });

  it("answers -32011 {kind: event} for an unknown name", async () => {
    const err = await rpcError(catalog.resolve("github.nope", {}));
    expect(err.code).toBe(-32011);
    expect(err.data).toEqual({ kind: "event" });
    expect(err.message).toMatch(/unknown event type "github\.nope"/);
  });

  it("answers -32602 {reason: invalid_arguments} naming the argument and what is allowed", async () => {
    const bad = await rpcError(catalog.resolve("github.push", { repository: "acme/api", pullRequest: 1 }));
    expect(bad.code).toBe(-32602);
    expect(bad.data).toMatchObject({ reason: "invalid_arguments" });
    expect(bad.message).toBe(
      "invalid arguments for github.push: pullRequest: is not an argument of github.push; its arguments are repository, branch",
    );
    const provider = await rpcError(catalog.resolve("github.push", { repository: "acme/api", provider: "gitlab" }));
    expect(provider.message).toBe(
      'invalid arguments for github.push: provider: must be one of local-gh, webhook, got "gitlab"',
    );
    expect(provider.data).toMatchObject({ reason: "invalid_arguments", details: [{ path: "provider" }] });
    // A name only one provider offers takes no provider argument.
    expect(
      (await rpcError(catalog.resolve("github.workflow_run", { repository: "acme/api", provider: "webhook" }))).message,
    ).toMatch(/provider: is not an argument of github\.workflow_run/);
    expect((await rpcError(catalog.resolve("agentpush.event", [] as never))).message).toMatch(/must be an object/);
    // local-gh refuses what its polling never sees.
    expect(
      (
        await rpcError(
          catalog.resolve("github.check_run", { repository: "acme/api", provider: "local-gh", actions: ["created"] }),
        )
      ).message,
    ).toMatch(/"created" is not delivered by this provider/);
  });

  it("gives clauses the real engine takes: the sentinel receives the matching events and only those", async () => {
    await setWebhookSecret();
    const gh = await catalog.resolve("github.pull_request", { repository: "acme/api", actions: ["closed"] });
    const push = await catalog.resolve("agentpush.event", { subject: "ci:acme/*", types: ["ci.build.*"] });
    const a = await h.engine.create(
      { match: gh.match, provider: gh.provider, until: { kind: "never" }, target: { kind: "test", name: "gh" } },
      "loopback",
    );
    const b = await h.engine.create(
      { match: push.match, provider: push.provider, until: { kind: "never" }, target: { kind: "test", name: "push" } },
      "loopback",
    );
    const pr = (action: string, id: string) =>
      mapGithubEvent(
        "pull_request",
        { action, number: 9, pull_request: { number: 9 }, repository: { full_name: "Acme/API" } },
        { id, fallbackTime: "2026-01-01T00:00:00Z" },
      )!;
    await h.engine.ingest("webhook", [pr("opened", "d1"), pr("closed", "d2")]);
    await h.engine.ingest("agentpush", [
      { id: "p1", type: "ci.build.finished", subjects: ["ci:acme/api"] },
      { id: "p2", type: "ci.deploy.finished", subjects: ["ci:acme/api"] },
      { id: "p3", type: "ci.build.finished", subjects: ["ci:other/api"] },
    ]);
    expect(h.rec.delivered.map((d) => [d.sentinelId, d.event.id])).toEqual([
      [a.id, "d2"],
      [b.id, "p1"],
    ]);
  });
});
