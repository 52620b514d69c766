/**
 * The catalog as the methods use it: resolving `(name, arguments)` to a provider and clauses, its
 * failures answered as the extension answers them (-32011 for an unknown name, -32602
 * `invalid_arguments` for arguments the type refuses). Every type the catalog lists is delivered
 * by webhook and by poll (catalog.ts `DELIVERY_MODES`), so either method may use any of them.
 */
import type { EventCatalog, ResolvedEventType } from "./catalog-types.js";
import { asEventsError } from "./rpc-errors.js";

export async function resolveEventType(
  catalog: EventCatalog,
  name: string,
  args: Record<string, unknown>,
): Promise<ResolvedEventType> {
  try {
    return await catalog.resolve(name, args);
  } catch (err) {
    throw asEventsError(err);
  }
}
