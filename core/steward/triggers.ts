/** The daemon events the session steward acts on, and the trigger (budget kind) each one is. */
export const TRIGGERS: Readonly<Record<string, string>> = {
  "session:stalled": "stalled",
  "session:turn-ended": "turn-ended",
  "session:handoff-suggested": "handoff-suggested",
  "session:context-warn": "context-warn",
  "session:context-compact": "context-compact",
  "session:context-continued": "context-continued",
  "session:context-hard-stop": "context-hard-stop",
};

/** The trigger of a judgement asked for (CLI, REST, MCP). */
export const ON_REQUEST = "request";
