/**
 * The events catalog behind `events/list`, `events/subscribe` and `events/poll`: the MCP event
 * types of every loaded provider (ProviderInstance.eventTypes), gathered on each call so a plugin
 * loaded or refreshed at run time is seen at once. A name offered by several providers (GitHub's,
 * by `local-gh` and `webhook`) is one entry with an extra `provider` argument. A provider whose
 * vocabulary cannot be read is logged once and left out; it never fails the list.
 */
import { McpRpcError } from "../daemon/mcp/extensions.js";
import { SvcError } from "../errors.js";
import type { Logger } from "../runtime/logger.js";
import type { MatchClauseSpec, ProviderEventType, ProviderInstance } from "../plugin-api/provider.js";
import { CLAUSES_PER_SENTINEL_MAX, SUBJECT_LENGTH_MAX, TYPES_PER_CLAUSE_MAX } from "../plugin-api/limits.js";
import type { SentinelPlugins } from "../sentinels/plugin-access.js";
import type { EventCatalog, EventTypeDescriptor, ResolvedEventType } from "./catalog-types.js";
import { occurrenceDataSchema } from "./occurrence-schema.js";

/** How every catalog event type is delivered (what svc serves: no push yet, docs/mcp-events.md): through a webhook sentinel, or polled from its buffer. */
export const DELIVERY_MODES: EventTypeDescriptor["delivery"] = ["webhook", "poll"];

/** Event type names: lower-case, dotted, at least `<scheme>.<family>`. */
const NAME = /^[a-z][a-z0-9_-]*(?:\.[a-z][a-z0-9_-]*)+$/;
/** The argument the catalog adds when several providers offer a name. */
const PROVIDER_ARG = "provider";

interface Offer {
  provider: string;
  instance: ProviderInstance;
  type: ProviderEventType;
}

export function createEventCatalog(deps: { plugins: () => SentinelPlugins; logger: Logger }): EventCatalog {
  const logged = new Set<string>();
  const logOnce = (provider: string, problem: string) => {
    const key = `${provider}\u0000${problem}`;
    if (logged.has(key)) return;
    logged.add(key);
    deps.logger.warn("provider event types left out of events/list", { provider, error: problem });
  };

  /** Every offer by name, names sorted, each name's providers in kind order. */
  async function offers(): Promise<Map<string, Offer[]>> {
    const plugins = deps.plugins();
    const byName = new Map<string, Offer[]>();
    for (const provider of [...plugins.providerKinds()].sort()) {
      let instance: ProviderInstance;
      try {
        instance = await plugins.provider(provider);
      } catch {
        continue; // a setup failure is logged and reported by the plugin host
      }
      let types: ProviderEventType[];
      try {
        types = instance.eventTypes?.() ?? [];
        if (!Array.isArray(types)) throw new Error("eventTypes() did not return an array");
      } catch (err) {
        logOnce(provider, `eventTypes() failed: ${(err as Error).message}`);
        continue;
      }
      const seen = new Set<string>();
      for (const type of types) {
        const problem = typeProblem(type, seen);
        if (problem) {
          logOnce(provider, problem);
          continue;
        }
        seen.add(type.name);
        byName.set(type.name, [...(byName.get(type.name) ?? []), { provider, instance, type }]);
      }
    }
    return new Map([...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  return {
    async list() {
      return [...(await offers()).entries()].map(([name, list]) => describe(name, list));
    },
    async resolve(name, args) {
      const list = (await offers()).get(name);
      if (!list)
        throw new McpRpcError(
          -32011,
          `unknown event type "${name}"; events/list gives the event types this server offers`,
          { kind: "event" },
        );
      if (typeof args !== "object" || args === null || Array.isArray(args))
        throw invalidArguments(`invalid arguments for ${name}: (root): must be an object`, []);
      const { offer, rest } = await choose(name, list, args);
      let match: MatchClauseSpec[];
      try {
        match = offer.type.toMatch(rest);
      } catch (err) {
        if (SvcError.is(err) && err.code === "invalid_input") throw invalidArguments(err.message, err.details ?? []);
        throw err;
      }
      const problem = matchProblem(match);
      if (problem)
        throw new SvcError(
          "internal",
          `provider ${offer.provider} gave unusable match clauses for ${name}: ${problem}`,
        );
      return {
        name,
        provider: offer.provider,
        match: match.map((c) => ({ subject: c.subject, ...(c.types ? { types: [...c.types] } : {}) })),
      } satisfies ResolvedEventType;
    },
  };
}

/** The offer a subscription goes to, and its arguments without `provider`. */
async function choose(
  name: string,
  list: Offer[],
  args: Record<string, unknown>,
): Promise<{ offer: Offer; rest: Record<string, unknown> }> {
  if (list.length === 1) return { offer: list[0]!, rest: args };
  const { [PROVIDER_ARG]: wanted, ...rest } = args;
  if (wanted === undefined) return { offer: await defaultOffer(list), rest };
  const offer = list.find((o) => o.provider === wanted);
  if (!offer) {
    const allowed = list.map((o) => o.provider).join(", ");
    const message = `must be one of ${allowed}, got ${JSON.stringify(wanted)}`;
    throw invalidArguments(`invalid arguments for ${name}: ${PROVIDER_ARG}: ${message}`, [
      { path: PROVIDER_ARG, message },
    ]);
  }
  return { offer, rest };
}

/** How long a preferring provider's readiness may take before it counts as not ready. */
export const READINESS_TIMEOUT_MS = 2_000;

/** The first provider preferring the name that is ready, else the first that does not prefer it. */
async function defaultOffer(list: Offer[]): Promise<Offer> {
  for (const o of list.filter((o) => o.type.preferWhenReady)) {
    if (await isReady(o.instance)) return o;
  }
  return list.find((o) => !o.type.preferWhenReady) ?? list[0]!;
}

/** Whether the provider says it is ready within {@link READINESS_TIMEOUT_MS} (a failure or a hang is "not ready"). */
async function isReady(instance: ProviderInstance): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), READINESS_TIMEOUT_MS);
    timer.unref();
  });
  try {
    return await Promise.race([
      instance.readiness().then(
        (r) => r?.ready === true,
        () => false,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function describe(name: string, list: Offer[]): EventTypeDescriptor {
  const shown = list.find((o) => o.type.preferWhenReady) ?? list[0]!;
  const base = { name, delivery: [...DELIVERY_MODES], payloadSchema: occurrenceDataSchema(shown.type.payloadSchema) };
  if (list.length === 1) return { ...base, description: shown.type.description, inputSchema: shown.type.inputSchema };
  const providerNote = providerChoice(list);
  const input = shown.type.inputSchema as { properties?: Record<string, unknown> };
  return {
    ...base,
    description: `${shown.type.description} ${providerNote}`,
    inputSchema: {
      ...shown.type.inputSchema,
      properties: {
        ...(input.properties ?? {}),
        [PROVIDER_ARG]: {
          type: "string",
          enum: list.map((o) => o.provider),
          description: `Which provider delivers the events. ${providerNote}`,
        },
      },
    },
  };
}

/** The sentence naming the providers of a shared name and the default among them. */
function providerChoice(list: Offer[]): string {
  const preferred = list.filter((o) => o.type.preferWhenReady);
  const fallback = list.find((o) => !o.type.preferWhenReady) ?? list[0]!;
  const names = list.map((o) => o.provider).join(", ");
  const rule = preferred.length
    ? `${preferred.map((o) => `${o.provider} when ${o.type.preferWhenReady}`).join(", else ")}, else ${fallback.provider}`
    : fallback.provider;
  return `Served by ${names}; default: ${rule}.`;
}

function typeProblem(type: ProviderEventType, seen: Set<string>): string | undefined {
  if (typeof type !== "object" || type === null) return "an event type is not an object";
  if (typeof type.name !== "string" || !NAME.test(type.name))
    return `event type name ${JSON.stringify(type.name)} is not lower-case and dotted (e.g. github.pull_request)`;
  if (seen.has(type.name)) return `event type ${type.name} is declared twice`;
  if (typeof type.description !== "string" || !type.description) return `event type ${type.name} has no description`;
  if (typeof type.toMatch !== "function") return `event type ${type.name} has no toMatch function`;
  const input = type.inputSchema as { type?: unknown; properties?: Record<string, unknown> } | undefined;
  if (typeof input !== "object" || input === null || input.type !== "object")
    return `event type ${type.name}: inputSchema is not a JSON Schema of type object`;
  if (input.properties && PROVIDER_ARG in input.properties)
    return `event type ${type.name}: the argument name "${PROVIDER_ARG}" is reserved`;
  if (typeof type.payloadSchema !== "object" || type.payloadSchema === null)
    return `event type ${type.name}: payloadSchema is not a JSON Schema object`;
  return undefined;
}

function matchProblem(match: unknown): string | undefined {
  if (!Array.isArray(match) || match.length === 0) return "no clauses";
  if (match.length > CLAUSES_PER_SENTINEL_MAX) return `${match.length} clauses, over ${CLAUSES_PER_SENTINEL_MAX}`;
  for (const c of match as MatchClauseSpec[]) {
    if (typeof c?.subject !== "string" || !c.subject || c.subject.length > SUBJECT_LENGTH_MAX)
      return `a clause subject is not a string of 1 to ${SUBJECT_LENGTH_MAX} characters`;
    if (
      c.types !== undefined &&
      (!Array.isArray(c.types) ||
        c.types.length === 0 ||
        c.types.length > TYPES_PER_CLAUSE_MAX ||
        c.types.some((t) => typeof t !== "string" || !t))
    ) {
      return `a clause's types are not 1 to ${TYPES_PER_CLAUSE_MAX} non-empty strings`;
    }
  }
  return undefined;
}

function invalidArguments(message: string, details: unknown): McpRpcError {
  return new McpRpcError(-32602, message, { reason: "invalid_arguments", details });
}
