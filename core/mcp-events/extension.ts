/**
 * The events extension as `/mcp` serves it (core/daemon/mcp/extensions.ts): `events/list`,
 * `events/subscribe`, `events/unsubscribe` and `events/poll`. Each method asks
 * core/daemon/authorization.ts for its operation (the one rule of every surface), works out whose
 * subscription it addresses (principal-key.ts) and hands over to the services, which are loaded on
 * first use (runtime.ts).
 */
import { authorize, type OperationId } from "../daemon/authorization.js";
import type { McpCallerContext, McpExtension, McpExtensionMethod } from "../daemon/mcp/extensions.js";
import type { EventCatalog } from "./catalog-types.js";
import { listEventTypes } from "./list-pages.js";
import { listParams, parseParams, pollParams, subscribeParams, unsubscribeParams } from "./params.js";
import { pollerKey, subscriberKey, type SessionLookup } from "./principal-key.js";
import { asEventsError, unsupported } from "./rpc-errors.js";
import type { McpEventsRuntime } from "./runtime.js";

export const EVENTS_EXTENSION_ID = "io.modelcontextprotocol/events";

export interface EventsExtensionDeps {
  catalog: () => EventCatalog;
  sessionOf: SessionLookup;
  runtime: () => Promise<McpEventsRuntime>;
}

export function eventsExtension(deps: EventsExtensionDeps): McpExtension {
  const method = <S extends McpExtensionMethod["params"]>(
    name: string,
    op: OperationId,
    params: S,
    run: (p: ReturnType<S["parse"]>, caller: McpCallerContext) => Promise<Record<string, unknown>>,
  ): McpExtensionMethod => ({
    params,
    async handler(raw, caller) {
      try {
        authorize(op, caller.principal);
        return await run(parseParams(params, raw, name) as ReturnType<S["parse"]>, caller);
      } catch (err) {
        throw asEventsError(err);
      }
    },
  });

  return {
    legacyCapability: "events",
    extensionId: EVENTS_EXTENSION_ID,
    settings: { listChanged: false },
    methods: {
      "events/list": method("events/list", "events.list", listParams, async (p) => ({
        ...(await listEventTypes(deps.catalog(), p.cursor)),
      })),
      "events/subscribe": method("events/subscribe", "events.subscribe", subscribeParams, async (p, caller) => {
        if (p.delivery.mode !== "webhook") {
          throw unsupported(
            "deliveryMode",
            p.delivery.mode,
            `events/subscribe delivers by webhook only (delivery.mode "webhook"); poll with events/poll; push (events/stream) is not served yet`,
          );
        }
        const key = subscriberKey(caller, deps.sessionOf, "events/subscribe");
        const { subscriptions } = await deps.runtime();
        const input = {
          name: p.name,
          url: p.delivery.url,
          secret: p.delivery.secret,
          ...(p.arguments ? { arguments: p.arguments } : {}),
          ...("ttlMs" in p ? { ttlMs: p.ttlMs } : {}),
        };
        return { ...(await subscriptions.subscribe(key, input)) };
      }),
      "events/unsubscribe": method("events/unsubscribe", "events.unsubscribe", unsubscribeParams, async (p, caller) => {
        const key = subscriberKey(caller, deps.sessionOf, "events/unsubscribe");
        const { subscriptions } = await deps.runtime();
        await subscriptions.unsubscribe(key, {
          name: p.name,
          url: p.delivery.url,
          ...(p.arguments ? { arguments: p.arguments } : {}),
        });
        return {};
      }),
      "events/poll": method("events/poll", "events.poll", pollParams, async (p, caller) => {
        const key = pollerKey(caller, deps.sessionOf, "events/poll");
        const { polls } = await deps.runtime();
        return { ...(await polls.poll(key, p)) };
      }),
    },
  };
}
