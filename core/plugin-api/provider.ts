import type { PluginContext, SentinelView } from "./context.js";
import type { SvcEvent } from "./events.js";

export interface ProviderReadiness {
  ready: boolean;
  /** One line a person can act on, e.g. "gh is not on PATH: install the GitHub CLI". */
  detail: string;
  [key: string]: unknown;
}

/** A sentinel match clause (SPEC.md SentinelSpec `match`): an exact subject or a `*` prefix, and type globs. */
export interface MatchClauseSpec {
  subject: string;
  /** Type globs; omitted: the provider's `defaultTypes(subject)`. */
  types?: string[];
}

/**
 * One MCP event type a provider offers (`events/list`, docs/mcp-events.md): a subscription to
 * `(name, arguments)` becomes a sentinel of this provider with the clauses `toMatch(arguments)`.
 * Evolve it additively for the life of its name (new optional arguments and payload fields only;
 * never narrow what was accepted): a breaking change is a new name.
 */
export interface ProviderEventType {
  /** Lower-case and dotted, `<scheme>.<family>`: e.g. `github.pull_request`, `agentpush.event`. */
  name: string;
  /** What a subscriber receives, in a sentence or two. */
  description: string;
  /**
   * JSON Schema (`type: "object"`) of the subscription arguments: every property described,
   * `additionalProperties: false`. The argument name `provider` is reserved for the host.
   */
  inputSchema: Record<string, unknown>;
  /** JSON Schema of this provider's event `data` (an occurrence's `data.payload`); every property described. */
  payloadSchema: Record<string, unknown>;
  /**
   * The match clauses for `args` (the subscription arguments, without `provider`). Validates them
   * and throws SvcError `invalid_input` naming the argument and what is allowed.
   */
  toMatch(args: Record<string, unknown>): MatchClauseSpec[];
  /**
   * When several loaded providers offer this name (`local-gh` and `webhook` both speak GitHub), a
   * subscription that names no provider goes to one setting this whenever its readiness is
   * `ready`; the text says what that takes (shown in `events/list`), e.g. "a GitHub webhook
   * secret is configured". Otherwise it goes to a provider not setting it.
   */
  preferWhenReady?: string;
}

/** A running provider: produces events for the sentinel engine. */
export interface ProviderInstance {
  /** The event types a clause watches when it gives no `types`. */
  defaultTypes(subject: string): string[];
  readiness(): Promise<ProviderReadiness>;
  /** `setup_sentinel_provider`: stores credentials or settings; returns a redacted summary. */
  configure?(input: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Turns `prUrl` (or another input form) into this provider's subject. */
  resolveSubject?(input: { subject?: string; prUrl?: string }): string;
  /** A sentinel using this provider was created (or loaded at boot). */
  watch?(sentinel: SentinelView): Promise<void>;
  /** A sentinel using this provider ended (removed or expired): cancel its provider-side watch. */
  unwatch?(sentinel: SentinelView): Promise<void>;
  /** `sentinel_poll_now`. */
  pollNow?(): Promise<void>;
  /** Subjects that `event` moves to a terminal state (e.g. a pull request closed or merged). */
  terminalSubjects?(event: SvcEvent): string[];
  /** The MCP event types this provider offers (`events/list`); see {@link ProviderEventType}. */
  eventTypes?(): ProviderEventType[];
  start?(): Promise<void>;
  stop?(): Promise<void>;
}

export interface ProviderPlugin {
  readonly type: "provider";
  readonly kind: string;
  readonly description?: string;
  setup(ctx: PluginContext): ProviderInstance | Promise<ProviderInstance>;
}

/** Declares a provider plugin. Default-export the result from the manifest's `entry`. */
export function defineProvider(def: Omit<ProviderPlugin, "type">): ProviderPlugin {
  return Object.freeze({ ...def, type: "provider" as const });
}
