/**
 * The events extension's DaemonModule: registers the extension on `/mcp` (MCP_EXTENSIONS) at
 * start, and loads its services lazily: at start only when subscription records exist (they must
 * be reconciled and swept), else at the first call that needs them.
 */
import { access } from "node:fs/promises";
import { join } from "node:path";
import type { DependencyContainer } from "tsyringe";
import { MCP_EXTENSIONS } from "../daemon/mcp/extensions.js";
import { SvcError } from "../errors.js";
import type { DaemonModule } from "../daemon/module.js";
import { SESSIONS } from "../sessions/runtime.js";
import { CLOCK, DAEMON_EVENTS, HOME, LOGGER, RANDOM, SENTINELS, resolve } from "../tokens.js";
import { EVENT_CATALOG, type EventCatalog } from "./catalog-types.js";
import { eventsExtension } from "./extension.js";
import type { McpEventsRuntime } from "./runtime.js";
import { SUBSCRIPTIONS_FILE } from "./subscription-store.js";

const running = new WeakMap<DependencyContainer, () => Promise<McpEventsRuntime> | undefined>();

export const mcpEventsModule: DaemonModule = {
  name: "mcp-events",
  async start(c) {
    let started: Promise<McpEventsRuntime> | undefined;
    const runtime = () =>
      (started ??= import("./runtime.js")
        .then((m) =>
          m.startMcpEventsRuntime({
            home: resolve(c, HOME),
            sentinels: resolve(c, SENTINELS),
            catalog: () => catalogOf(c),
            clock: resolve(c, CLOCK),
            random: resolve(c, RANDOM),
            logger: resolve(c, LOGGER),
            events: resolve(c, DAEMON_EVENTS),
          }),
        )
        .catch((err: unknown) => {
          started = undefined; // the next call tries again
          throw err;
        }));
    running.set(c, () => started);
    const sessionOf = (token: string) =>
      c.isRegistered(SESSIONS as symbol) ? resolve(c, SESSIONS).workspaces.tokens.sessionOf(token) : undefined;
    resolve(c, MCP_EXTENSIONS).add(eventsExtension({ catalog: () => catalogOf(c), sessionOf, runtime }));
    if (await exists(join(resolve(c, HOME), SUBSCRIPTIONS_FILE))) await runtime();
  },
  async drain(c) {
    (
      await running
        .get(c)?.()
        ?.catch(() => undefined)
    )?.drain();
  },
  async stop(c) {
    await (
      await running
        .get(c)?.()
        ?.catch(() => undefined)
    )?.stop();
    running.delete(c);
  },
};

function catalogOf(c: DependencyContainer): EventCatalog {
  if (!c.isRegistered(EVENT_CATALOG as symbol))
    throw new SvcError("unavailable", "the event catalog is not loaded in this daemon");
  return resolve(c, EVENT_CATALOG);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** The events services of a daemon's container, if they have started (tests, status). */
export function mcpEventsRuntime(c: DependencyContainer): Promise<McpEventsRuntime> | undefined {
  return running.get(c)?.();
}
