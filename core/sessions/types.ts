import type { PromptSender, PromptUrgency, SpawnOptionValue } from "../plugin-api/sessions.js";

export type SessionState = "starting" | "idle" | "busy" | "ended";

/** How a listing shows a session: `running` until `sessions.attentionDelaySec` after its last turn. */
export type SessionActivity = "running" | "attention" | "quiet" | "ended";

/** Where the adapter for a slug came from (SPEC.md acpAgents: package, then config, then catalog). */
export type AdapterSource = "package" | "config" | "catalog" | "terminal";

export interface PendingPromptView {
  promptId: string;
  sender: PromptSender;
  urgency: PromptUrgency;
  enqueuedAt: number;
  ageMs: number;
  stale: boolean;
  preview: string;
}

/** A session as listings, responses and tools show it. Never carries a secret. */
export interface SessionDescriptor {
  id: string;
  adapter: string;
  source: AdapterSource;
  kind: "agent" | "terminal";
  state: SessionState;
  activity: SessionActivity;
  label?: string;
  name?: string;
  cwd: string;
  parentId?: string;
  depth: number;
  role: string;
  createdAt: number;
  endedAt?: number;
  exit?: { code: number | null; signal: string | null; error?: string };
  pid?: number;
  turns: number;
  lastActivityAt: number;
  lastTurnEndedAt?: number;
  lastStopReason?: string;
  lastTurnErrorMessage?: string;
  stalledSinceMs?: number;
  options: Record<string, SpawnOptionValue>;
  skills: string[];
  /** The auth defaults applied, redacted: which kinds of credential were passed, never their values. */
  auth?: { mode?: string; provider?: string; hasToken?: boolean; hasApiKey?: boolean };
  info?: Record<string, unknown>;
  eventsPath: string;
  terminalPath?: string;
  pendingPrompts: PendingPromptView[];
}

export interface StartRequest {
  adapter: string;
  cwd?: string;
  prompt?: string;
  label?: string;
  name?: string;
  options?: Record<string, SpawnOptionValue>;
  skills?: string[];
  parentId?: string;
  /** Terminal sessions. */
  argv?: string[];
  env?: Record<string, string>;
}

export interface TurnResult {
  promptId: string;
  stopReason: string;
  text: string;
  error?: string;
}
