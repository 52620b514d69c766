import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventTypeDescriptor } from "../../../core/mcp-events/catalog-types.js";
import { MCP_EVENTS_LIMITS as L } from "../../../core/mcp-events/limits.js";
import { defineProvider, type ProviderEventType } from "../../../core/plugin-api/index.js";
import { makeTempHome } from "../../support/cli.js";
import { as, rpcFailure, startEventsHarness, type EventsHarness } from "./support/harness.js";

/** A provider offering many event types (the real catalog lists them with agentpush's, sorted by name). */
const offered: ProviderEventType[] = [];
const offer = (name: string): ProviderEventType => ({
  name,
  description: `the ${name} events`,
  inputSchema: { type: "object", properties: {} },
  payloadSchema: { type: "object" },
  toMatch: () => [{ subject: `${name}:x` }],
});
const many = defineProvider({
  kind: "many",
  setup: () => ({
    defaultTypes: () => ["*"],
    readiness: async () => ({ ready: true, detail: "" }),
    eventTypes: () => offered,
  }),
});

describe("events/list", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  let h: EventsHarness;

  beforeEach(async () => {
    ({ home, cleanup } = await makeTempHome("svc-mcp-list-"));
    offered.splice(
      0,
      offered.length,
      ...Array.from({ length: 2 * L.listPageSize + 6 }, (_, i) => offer(`t.n${String(i).padStart(3, "0")}`)),
    );
    h = await startEventsHarness(home, { plugins: [many] });
  });
  afterEach(async () => {
    await h.stop();
    await cleanup();
  });

  it("is advertised as the events extension, list not changing", () => {
    expect(h.extension).toMatchObject({
      legacyCapability: "events",
      extensionId: "io.modelcontextprotocol/events",
      settings: { listChanged: false },
    });
    expect(Object.keys(h.extension.methods).sort()).toEqual([
      "events/list",
      "events/poll",
      "events/subscribe",
      "events/unsubscribe",
    ]);
  });

  it(`pages the catalog ${L.listPageSize} at a time with an opaque cursor, in the catalog's order`, async () => {
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await h.call("events/list", cursor ? { cursor } : {});
      names.push(...page.events.map((e: EventTypeDescriptor) => e.name));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(names).toEqual(["agentpush.event", ...offered.map((t) => t.name)]);
    // No params at all is the first page too.
    expect((await h.call("events/list", undefined)).events[0]).toMatchObject({
      name: "agentpush.event",
      delivery: ["webhook", "poll"],
    });
  });

  it("refuses a cursor svc did not make, or one of a list that changed since (invalid_cursor)", async () => {
    const { nextCursor } = await h.call("events/list", {});
    expect(await rpcFailure(h.call("events/list", { cursor: "garbage" }))).toMatchObject({
      code: -32602,
      data: { reason: "invalid_cursor" },
    });
    offered.push(offer("t.new"));
    expect(await rpcFailure(h.call("events/list", { cursor: nextCursor }))).toMatchObject({
      code: -32602,
      data: { reason: "invalid_cursor" },
      message: expect.stringMatching(/changed/),
    });
  });

  it("any caller that may read lists", async () => {
    for (const p of ["anonymous", "remote:tunnel", "remote:sealed", "loopback", "remote:pairing:p:read"])
      expect((await h.call("events/list", {}, as(p))).events).toHaveLength(L.listPageSize);
  });
});
