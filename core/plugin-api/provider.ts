import type { PluginContext, SentinelView } from "./context.js";
import type { SvcEvent } from "./events.js";

export interface ProviderReadiness {
  ready: boolean;
  /** One line a person can act on, e.g. "gh is not on PATH: install the GitHub CLI". */
  detail: string;
  [key: string]: unknown;
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
