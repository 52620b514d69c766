/**
 * The hook through which tracing (core/tracing) takes part in a session's life without the session
 * runtime importing it: when a session is made, tracing decides whether it is traced, opens its
 * root span and hands back the environment its agent starts with (`TRACEPARENT`); the rest it reads
 * from the session's transcript (turns, tool calls, deliveries, the end). The runtime tells it the
 * model calls the llm-endpoint sidecar carried, which no transcript line records.
 */
import type { TranscriptWriter } from "./transcript.js";
import type { SwarmStepRef } from "./types.js";

export interface TracedSessionStart {
  sessionId: string;
  adapter: string;
  /** The start request's `extTracing`: over the default (`defaults.extTracing`) when set. */
  requested?: boolean;
  /** The session whose trace this one joins when it is traced: its parent, else the session that asked for it. */
  joins?: string;
  model?: string;
  run?: SwarmStepRef;
  createdAt: number;
  transcript: TranscriptWriter;
}

/** One model call the llm-endpoint sidecar carried (core/llm-endpoint/protocol.ts CallRecord). */
export interface ModelCallNote {
  model: string;
  requested?: string;
  api?: string;
  inputTokens: number;
  outputTokens: number;
  status: number;
  /** ISO time the call started. */
  at: string;
  latencyMs?: number;
  firstByteMs?: number;
  stream?: boolean;
  error?: string;
}

export interface SessionTracing {
  /** Resolves to the environment (over the adapter's own) the session's agent starts with; undefined: not traced. Never rejects. */
  open(session: TracedSessionStart): Promise<Record<string, string> | undefined>;
  /** A model call of the session, carried by the llm-endpoint sidecar. */
  modelCall(sessionId: string, call: ModelCallNote): void;
}
