/**
 * The catalog as the methods use it: the delivery modes svc serves (push is not served yet, see
 * docs/mcp-events.md), and resolving `(name, arguments)` for one mode.
 */
import type { DeliveryMode, EventCatalog, ResolvedEventType } from "./catalog-types.js";
import { toRpcError, unsupported } from "./rpc-errors.js";

/** What svc delivers by; an event type's listed modes are cut to these. */
export const SERVED_MODES: readonly DeliveryMode[] = ["webhook", "poll"];

/**
 * The provider and clauses of `(name, args)` delivered by `mode`: -32011 for an unknown name,
 * -32602 `invalid_arguments` for arguments the type refuses, -32014 when it is not delivered so.
 */
export async function resolveEventType(catalog: EventCatalog, name: string, args: Record<string, unknown>, mode: DeliveryMode): Promise<ResolvedEventType> {
  let resolved: ResolvedEventType;
  try {
    resolved = await catalog.resolve(name, args);
  } catch (err) {
    throw toRpcError(err);
  }
  const modes = (await catalog.list()).find((d) => d.name === name)?.delivery.filter((m) => SERVED_MODES.includes(m)) ?? [];
  if (!modes.includes(mode)) {
    throw unsupported("deliveryMode", mode, `event type ${name} is not delivered by ${mode}; it is delivered by ${modes.join(", ") || "(nothing svc serves)"}`);
  }
  return resolved;
}
