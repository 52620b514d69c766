import { stat } from "node:fs/promises";
import { SvcError } from "../errors.js";
import { isSessionId, sessionFiles } from "./events-dir.js";
import type { SessionRuntime } from "./runtime.js";
import { readTranscriptTail } from "./transcript-reader.js";
import type { TranscriptLine } from "./transcript.js";
import type { SessionDescriptor } from "./types.js";

/**
 * The transcript files of a session, live or from an earlier daemon life (found on disk). For a
 * session this daemon knows, everything appended so far is on disk when this resolves.
 */
export async function transcriptPaths(
  runtime: SessionRuntime,
  id: string,
): Promise<{ events: string; terminal?: string; live: boolean }> {
  if (runtime.state(id) !== "unknown") {
    const s = runtime.get(id);
    await Promise.all([s.transcript.flushed(), s.terminal?.flushed()]);
    return { events: s.fixed.eventsPath, terminal: s.fixed.terminalPath, live: s.live };
  }
  if (!isSessionId(id)) throw new SvcError("invalid_input", `invalid session id ${JSON.stringify(id)}`);
  const files = sessionFiles(runtime.eventsDir, id);
  if (!(await stat(files.events).catch(() => undefined)))
    throw new SvcError("not_found", `no session ${id}: no transcript under ${runtime.eventsDir}`);
  const hasTerminal = Boolean(await stat(files.terminal).catch(() => undefined));
  return { events: files.events, terminal: hasTerminal ? files.terminal : undefined, live: false };
}

export interface Recap {
  session: SessionDescriptor;
  pendingPrompts: SessionDescriptor["pendingPrompts"];
  lastResult?: { promptId: string; stopReason: string; text: string; error?: string };
  recent: TranscriptLine[];
}

/** `session_recap`: the descriptor, the queued prompts (stale ones flagged), the last result and the latest transcript lines. */
export async function recap(runtime: SessionRuntime, id: string, recentLines = 20): Promise<Recap> {
  const s = runtime.get(id);
  await s.transcript.flushed();
  const session = runtime.describe(s);
  const recent = await readTranscriptTail(s.fixed.eventsPath, recentLines);
  const last = [...s.results.values()].at(-1);
  return { session, pendingPrompts: session.pendingPrompts, ...(last ? { lastResult: last } : {}), recent };
}

export interface ConversationMessage {
  role: "user" | "agent";
  text: string;
  at: number;
  promptId?: string;
}

/** A transcript folded into chat form: each prompt, then the agent's text chunks of that turn joined. */
export function conversation(lines: TranscriptLine[]): ConversationMessage[] {
  const out: ConversationMessage[] = [];
  let agent: ConversationMessage | undefined;
  for (const l of lines) {
    const d = l.data as Record<string, any> | undefined;
    if (l.type === "prompt") {
      agent = undefined;
      out.push({ role: "user", text: String(d?.text ?? ""), at: l.at, promptId: d?.promptId });
    } else if (l.type === "update" && d?.kind === "agent_message_chunk" && d.update?.content?.type === "text") {
      if (!agent) out.push((agent = { role: "agent", text: "", at: l.at }));
      agent.text += d.update.content.text;
    } else if (l.type === "turn.ended" || l.type === "turn.failed") {
      agent = undefined;
    }
  }
  return out;
}
