/**
 * The first prompt of a session that continues another one in a fresh context
 * (`contextContinuity.continueFreshAtPct`): why it continues, the old session's first prompt, its
 * latest prompts and the agent's latest reply, each cut to a bound so the whole stays small.
 */
import type { TranscriptLine } from "./transcript.js";

const FIRST_PROMPT_CHARS = 2000;
const LATEST_PROMPTS = 3;
const LATEST_PROMPT_CHARS = 1500;
const REPLY_CHARS = 3000;
const HANDOFF_MARK = "[svc handoff]";

export interface HandoffReason {
  fromSessionId: string;
  pct: number;
  key: string;
  atPct: number;
}

/** The handoff prompt from the old session's transcript lines. At most ~10 KB whatever their size. */
export function handoffSummary(lines: readonly TranscriptLine[], why: HandoffReason): string {
  const prompts = lines
    .filter((l) => l.type === "prompt")
    .map((l) => l.data as { text?: unknown; sender?: { kind?: string } })
    // svc's own prompts (a compaction, a stale notice) are no task; an earlier handoff is (it carries the task on).
    .filter((d) => typeof d.text === "string" && (d.sender?.kind !== "system" || d.text.startsWith(HANDOFF_MARK)))
    .map((d) => d.text as string);
  const reply = [...lines]
    .reverse()
    .find(
      (l) =>
        (l.type === "turn.ended" || l.type === "turn.failed") &&
        typeof (l.data as { text?: unknown })?.text === "string" &&
        (l.data as { text: string }).text !== "",
    );
  const parts = [
    `${HANDOFF_MARK} You continue session ${why.fromSessionId}, which reached ${why.pct}% of its model's context window (defaults.contextContinuity.${why.key} is ${why.atPct}). ` +
      "This is a fresh context in the same workspace: its files are as the previous session left them. Below are its first prompt, its latest prompts and its latest reply; carry on with the task from there.",
  ];
  if (prompts.length > 0) parts.push(`## First prompt\n${cut(prompts[0]!, FIRST_PROMPT_CHARS)}`);
  const latest = prompts.slice(1).slice(-LATEST_PROMPTS);
  if (latest.length > 0)
    parts.push(
      `## Latest prompts (oldest first)\n${latest.map((p, i) => `${i + 1}. ${cut(p, LATEST_PROMPT_CHARS)}`).join("\n")}`,
    );
  if (reply)
    parts.push(`## The agent's latest reply\n${cut((reply.data as { text: string }).text, REPLY_CHARS, "start")}`);
  return parts.join("\n\n");
}

/** `text` within `max` characters, marked where it was cut; `drop: "start"` keeps the end (a reply's conclusion). */
function cut(text: string, max: number, drop: "end" | "start" = "end"): string {
  if (text.length <= max) return text;
  return drop === "end"
    ? `${text.slice(0, max)}… [${text.length - max} more characters]`
    : `[${text.length - max} earlier characters] …${text.slice(-max)}`;
}
