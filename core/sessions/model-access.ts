/**
 * The hook through which the model proxy (core/llm-endpoint, when enabled) takes part in a
 * session's life without the session runtime importing it: at launch it hands the session the
 * environment and auth that send its model calls through the proxy; at the end it revokes the
 * session's access. The runtime in turn keeps what the proxy reports on the session's descriptor
 * (`modelUsage`) and transcript.
 */
import type { SpawnAuth } from "../plugin-api/sessions.js";

export interface ModelAccess {
  /** The environment (over the adapter's own) and auth a session starts with; undefined: no change. */
  open(session: {
    sessionId: string;
    runId?: string;
    auth?: SpawnAuth;
  }): Promise<{ env: Record<string, string>; auth?: SpawnAuth } | undefined>;
  /** The session ended: its access stops at once. */
  close(sessionId: string): void;
  /**
   * Resolves once every call of the session that ended before now has been noted
   * (`noteModelCall`): the turn loop waits for it before it judges a turn by its calls. Bounded:
   * it resolves after a short wait when the proxy does not answer.
   */
  noted?(sessionId: string): Promise<void>;
}

/** A session's model calls through the proxy, as its descriptor shows them. */
export interface ModelUsage {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** Calls the proxy refused (a budget, a rate, a hard stop). */
  refused: number;
  /** Calls that failed upstream or were cut (status 5xx, or the client went away). */
  failed: number;
  lastModel?: string;
  lastCallAt?: string;
}

export function emptyModelUsage(): ModelUsage {
  return { calls: 0, inputTokens: 0, outputTokens: 0, refused: 0, failed: 0 };
}
