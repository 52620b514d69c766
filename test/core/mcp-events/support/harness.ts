/**
 * The events extension in-process on a temporary SVC_HOME: the real sentinel engine with the real
 * webhook target and agentpush provider, the real event catalog, the egress letting loopback callbacks through the SSRF
 * gate (as `webhooks.allowSubnets` does), the module registered as the daemon registers it, and
 * the extension's handlers called directly with a caller context.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { DependencyContainer } from "tsyringe";
import { createContainer } from "../../../../core/container.js";
import { MCP_EXTENSIONS, type McpCallerContext, type McpExtension } from "../../../../core/daemon/mcp/extensions.js";
import { EVENTS_EXTENSION_ID } from "../../../../core/mcp-events/extension.js";
import { mcpEventsModule, mcpEventsRuntime } from "../../../../core/mcp-events/module.js";
import type { McpEventsRuntime } from "../../../../core/mcp-events/runtime.js";
import type { AnyPlugin, SvcEvent } from "../../../../core/plugin-api/index.js";
import { FakeClock, type Sleep } from "../../../../core/runtime/clock.js";
import { toRpcError } from "../../../../core/daemon/mcp/rpc-error.js";
import { registerValue } from "../../../../core/runtime/inject.js";
import { createMemoryLogger } from "../../../../core/runtime/logger.js";
import type { SentinelEngine } from "../../../../core/sentinels/engine.js";
import { sentinelsModule } from "../../../../core/sentinels/module.js";
import { ManualTicker } from "../../../../core/sentinels/ticker.js";
import { SENTINEL_TICKER } from "../../../../core/sentinels/tokens.js";
import { EGRESS, PLUGINS, SENTINELS, resolve } from "../../../../core/tokens.js";
import agentpush from "../../../../plugins/agentpush/index.js";
import webhookTarget from "../../../../plugins/webhook-target/index.js";
import { LOOPBACK_ALLOWED } from "../../../support/https-receiver.js";
import { eventCatalogModule } from "../../../../core/mcp-events/catalog-module.js";

export const OWNER: McpCallerContext = { principal: "token:boot", era: "modern" };
export const as = (principal: string, sessionToken?: string): McpCallerContext => ({
  principal,
  era: "modern",
  ...(sessionToken ? { sessionToken } : {}),
});

export interface EventsHarness {
  c: DependencyContainer;
  engine: SentinelEngine;
  clock: FakeClock;
  logs: string[];
  extension: McpExtension;
  /** Calls a method's handler as `/mcp` would. */
  call(method: string, params: unknown, caller?: McpCallerContext): Promise<Record<string, any>>;
  /** The services (started by the first call that needs them). */
  runtime(): Promise<McpEventsRuntime>;
  push(events: SvcEvent[]): Promise<unknown>;
  stop(): Promise<void>;
}

/**
 * Starts the sentinels, the event catalog and the events module on `home` (again on the same
 * home: a restart). `plugins` adds providers; `sleep` replaces the daemon's sleep (the waits
 * between delivery attempts, and the plugin host's setup timeout).
 */
export async function startEventsHarness(
  home: string,
  opts: { clock?: FakeClock; plugins?: AnyPlugin[]; sleep?: Sleep } = {},
): Promise<EventsHarness> {
  await writeFile(join(home, "config.json"), JSON.stringify({ webhooks: { allowSubnets: LOOPBACK_ALLOWED } }));
  const clock = opts.clock ?? new FakeClock(Date.now());
  const logger = createMemoryLogger();
  const c = await createContainer({ home, env: {}, clock, logger, ...(opts.sleep ? { sleep: opts.sleep } : {}) });
  registerValue(c, SENTINEL_TICKER, new ManualTicker());
  const registry = resolve(c, PLUGINS);
  for (const definition of [webhookTarget, agentpush, ...(opts.plugins ?? [])] as AnyPlugin[]) {
    registry.add({
      type: definition.type,
      kind: definition.kind,
      definition,
      source: { package: "test", builtin: true, resolvedFrom: "cwd", dir: home },
    });
  }
  await sentinelsModule.start(c);
  await eventCatalogModule.start(c);
  await mcpEventsModule.start(c);
  const engine = resolve(c, SENTINELS) as SentinelEngine;
  const extension = resolve(c, MCP_EXTENSIONS)
    .list()
    .find((e) => e.extensionId === EVENTS_EXTENSION_ID)!;
  return {
    c,
    engine,
    clock,
    logs: logger.lines,
    extension,
    // As /mcp answers: a failure goes through the one mapping of every extension method.
    call: (method, params, caller = OWNER) =>
      extension.methods[method]!.handler(params, caller).catch((err: unknown) => Promise.reject(toRpcError(err))),
    runtime: async () => {
      const started = mcpEventsRuntime(c);
      if (!started) throw new Error("the events services have not started");
      return started;
    },
    push: (events) => engine.ingest("agentpush", events),
    async stop() {
      await mcpEventsModule.stop!(c);
      await sentinelsModule.stop!(c);
      await resolve(c, EGRESS).close();
    },
  };
}

/** The McpRpcError a call rejects with (fails when it resolves). */
export async function rpcFailure(
  p: Promise<unknown>,
): Promise<{ code: number; message: string; data?: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    return err as { code: number; message: string; data?: Record<string, unknown> };
  }
  throw new Error("expected the call to fail");
}
