import { SvcError, type AcpRecipe } from "../../core/plugin-api/index.js";

/** An `authMethods` entry of an `initialize` answer (ACP: `{id, name, description?, type?}`). */
export interface AdvertisedAuthMethod {
  id: string;
  name?: string;
  type?: string;
}

const API_KEY = /api[-_ ]?key/i;

/**
 * The method to call ACP `authenticate` with, or undefined not to call it: the recipe's
 * `auth.method` (which the agent must advertise; `"none"` never authenticates), else, when svc
 * holds a key for the agent, the advertised method whose id or name says "api key". Methods of
 * type `terminal` are the user's to run in a terminal, never the client's to call.
 */
export function authMethodFor(
  slug: string,
  advertised: readonly AdvertisedAuthMethod[] | undefined,
  recipe: AcpRecipe,
  holdsKey: boolean,
): string | undefined {
  const methods = (advertised ?? []).filter((m) => m && typeof m.id === "string" && m.type !== "terminal");
  const named = recipe.auth?.method;
  if (named === "none") return undefined;
  if (named !== undefined) {
    if (methods.some((m) => m.id === named)) return named;
    throw new SvcError(
      "unavailable",
      `ACP agent "${slug}": acpAgents.${slug}.auth.method is "${named}", which the agent does not offer; it offers ${listMethods(advertised)}`,
    );
  }
  if (!holdsKey) return undefined;
  return methods.find((m) => API_KEY.test(m.id) || API_KEY.test(m.name ?? ""))?.id;
}

/** The advertised methods, for an error: `id (name)`, comma-separated, or "no methods". */
export function listMethods(advertised: readonly AdvertisedAuthMethod[] | undefined): string {
  const list = (advertised ?? []).filter((m) => m && typeof m.id === "string");
  return list.length === 0
    ? "no methods"
    : list.map((m) => (m.name && m.name !== m.id ? `${m.id} (${m.name})` : m.id)).join(", ");
}
