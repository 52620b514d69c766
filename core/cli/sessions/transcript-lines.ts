/**
 * A session transcript (events.jsonl, core/sessions/transcript.ts) as readable lines, for
 * `svc sessions follow`: `HH:MM:SS <what>: <details>`, local time. The streamed chunks of one agent
 * message (or thought) stay on one line as they arrive; any other entry ends that line first.
 * The transcript is redacted where it is written; this adds nothing from the environment and
 * never shows a session's auth or spawn options.
 */
import type { TranscriptLine } from "../../sessions/transcript.js";

/** Transcript data is whatever each writer put there: every field is checked as it is read. */
type Data = Record<string, any>;

export interface RenderOptions {
  /** ANSI colour (dim times, red failures); off by default. */
  color?: boolean;
}

/** `HH:MM:SS` in local time. */
export function clockTime(at: number): string {
  const d = new Date(at);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}

const STREAMED: Record<string, string> = {
  agent_message_chunk: "agent",
  agent_thought_chunk: "thought",
  user_message_chunk: "user",
};

const PLAN_MARK: Record<string, string> = { completed: "[x]", in_progress: "[~]", pending: "[ ]" };

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const list = (parts: Array<string | undefined | false>, sep = ", "): string =>
  parts.filter((p): p is string => typeof p === "string" && p !== "").join(sep);
const paren = (inner: string): string => (inner ? ` (${inner})` : "");

/** Who sent a prompt: `human`, `session ses_…`, `sentinel snt_…`, `system`. */
export function senderOf(sender: unknown): string {
  const s = sender as { kind?: unknown; id?: unknown } | undefined;
  return list([str(s?.kind) ?? "unknown", str(s?.id)], " ");
}

function exitOf(d: Data): string {
  return list([d.code !== undefined && d.code !== null && `code ${d.code}`, str(d.signal) && `signal ${d.signal}`]);
}

/** What `info.model` (plugins/acp/model-choice.ts) says of the model, with its "not applied" note. */
export function modelLine(model: unknown): string | undefined {
  const m = model as { requested?: unknown; applied?: unknown; current?: unknown; note?: unknown } | undefined;
  if (!m || typeof m !== "object") return undefined;
  const current = str(m.current);
  const requested = str(m.requested);
  if (m.applied === true) return `model ${current ?? requested ?? "?"}`;
  const note = str(m.note) ?? (requested ? `model not applied (asked for ${requested})` : undefined);
  return list([`model ${current ?? "agent default"}`, note], "; ");
}

function agentOf(info: Data | undefined): string | undefined {
  const a = info?.agent as Data | undefined;
  return list([str(a?.title) ?? str(a?.name), str(a?.version)], " ") || undefined;
}

/** A one-line summary of the scalar fields of an entry no rendering knows (never its nested objects). */
function scalars(d: unknown): string {
  if (!d || typeof d !== "object") return d === undefined ? "" : String(d);
  return Object.entries(d as Data)
    .filter(([, v]) => ["string", "number", "boolean"].includes(typeof v))
    .map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v.length > 80 ? `${v.slice(0, 79)}…` : v) : v}`)
    .join(" ");
}

/** Renders a transcript as it is read or as it grows: feed each entry to `push`, then call `finish`. */
export class TranscriptRenderer {
  /** The agent message (or thought) whose chunks are being written on the current line. */
  private streaming: { kind: string; messageId?: string; midLine: boolean } | undefined;
  /** Tool titles by toolCallId, for updates that name only the id. */
  private readonly tools = new Map<string, string>();

  constructor(private readonly opts: RenderOptions = {}) {}

  /** The text to write for one entry: whole lines, or the next chunk of the message being streamed. */
  push(line: TranscriptLine): string {
    const d = (line.data && typeof line.data === "object" ? line.data : {}) as Data;
    if (line.type === "update" && STREAMED[d.kind] !== undefined) return this.chunk(line, d);
    const body = this.describe(line, d);
    const close = this.finish();
    return body === undefined ? close : close + this.entry(line.at, body.text, body.failed);
  }

  /** Ends the line of a message being streamed (when the transcript ends or the reader stops). */
  finish(): string {
    const open = this.streaming;
    this.streaming = undefined;
    return open?.midLine ? "\n" : "";
  }

  private paint(code: number, s: string): string {
    return this.opts.color ? `\u001b[${code}m${s}\u001b[0m` : s;
  }

  private prefix(at: number): string {
    return `${this.paint(2, clockTime(at))} `;
  }

  /** `HH:MM:SS text`, its further lines indented under the text. */
  private entry(at: number, text: string, failed = false): string {
    const indent = " ".repeat(clockTime(at).length + 1);
    const shown = text.replace(/\n+$/, "").replaceAll("\n", `\n${indent}`);
    return `${this.prefix(at)}${failed ? this.paint(31, shown) : shown}\n`;
  }

  private chunk(line: TranscriptLine, d: Data): string {
    const u = (d.update ?? {}) as Data;
    const content = u.content as Data | undefined;
    const text = content?.type === "text" && typeof content.text === "string" ? content.text : undefined;
    if (text === undefined) return this.push({ ...line, data: { kind: `${d.kind} (${content?.type ?? "?"})` } });
    const kind = STREAMED[d.kind]!;
    const messageId = str(u.messageId);
    let out = "";
    const open = this.streaming;
    if (!open || open.kind !== kind || open.messageId !== messageId) {
      out += this.finish() + `${this.prefix(line.at)}${kind}: `;
      this.streaming = { kind, messageId, midLine: true };
    }
    const s = this.streaming!;
    const indent = " ".repeat(clockTime(line.at).length + 1);
    text.split("\n").forEach((part, i) => {
      if (i > 0) {
        out += "\n";
        s.midLine = false;
      }
      if (part === "") return;
      if (!s.midLine) out += indent;
      s.midLine = true;
      out += part;
    });
    return out;
  }

  /** An entry's text; undefined for one not worth a line of its own. */
  private describe(line: TranscriptLine, d: Data): { text: string; failed?: boolean } | undefined {
    switch (line.type) {
      case "session.starting":
        return {
          text: `starting: ${list([str(d.adapter), paren(list([str(d.source), d.kind === "terminal" && "terminal"]))], "")}${str(d.cwd) ? ` in ${d.cwd}` : ""}${paren(
            list([
              str(d.label) && `label ${JSON.stringify(d.label)}`,
              str(d.parentId) && `child of ${d.parentId}`,
              str(d.worktree?.path) && `worktree ${d.worktree.path}`,
              str(d.continuedFrom) && `continues ${d.continuedFrom}`,
              str(d.note),
            ]),
          )}`,
        };
      case "worktree.provisioning":
        return { text: `provisioning worktree${str(d.path) ? ` ${d.path}` : ""}` };
      case "session.resumed":
        return {
          text: `resumed: ${list([str(d.adapter), paren(list([str(d.source), num(d.resumes) !== undefined && `resume ${d.resumes}`]))], "")}`,
        };
      case "session.started": {
        const info = d.info as Data | undefined;
        return {
          text: `started: ${list([
            num(d.pid) !== undefined && `pid ${d.pid}`,
            agentOf(info),
            modelLine(info?.model),
            info?.modelProxy?.proxied === false &&
              `not through the model proxy${str(info.modelProxy.why) ? `: ${info.modelProxy.why}` : ""}`,
            info?.loaded === true && "conversation loaded",
          ])}`,
        };
      }
      case "prompt.received":
        // The prompt itself is shown when its turn starts; a receipt only says when it waits.
        return d.delivery === "started" || d.delivery === undefined
          ? undefined
          : {
              text: `prompt ${d.delivery}: ${list([str(d.promptId), `from ${senderOf(d.sender)}`, str(d.note)], " ")}`,
            };
      case "prompt":
        return { text: `${senderOf(d.sender)}: ${String(d.text ?? "")}` };
      case "input":
        return { text: `input: ${num(d.bytes) ?? "?"} bytes from ${senderOf(d.sender)}` };
      case "output":
        return { text: `${str(d.stream) ?? "output"}: ${String(d.text ?? "")}` };
      case "update":
        return this.update(String(d.kind ?? "?"), (d.update ?? {}) as Data);
      case "turn.ended":
        return { text: `turn ended: ${str(d.stopReason) ?? "?"}` };
      case "turn.failed":
        return { text: `turn failed: ${list([str(d.stopReason) ?? "?", str(d.error)], ": ")}`, failed: true };
      case "quota":
        return {
          text: `quota: ${list([str(d.profile), num(d.remaining) !== undefined && `${d.remaining} left`, str(d.window) && `(${d.window})`], " ")}`,
        };
      case "session.stopping":
        return { text: "stopping" };
      case "session.stalled":
        return { text: `stalled${str(d.lastTurnErrorMessage) ? `: ${d.lastTurnErrorMessage}` : ""}`, failed: true };
      case "prompt.stale":
        return {
          text: `prompt ${str(d.promptId) ?? "?"} from ${senderOf(d.sender)} still queued${num(d.enqueuedAt) ? ` since ${clockTime(d.enqueuedAt)}` : ""}`,
        };
      case "session.handoff-suggested":
        return {
          text: `handoff suggested: ${list([str(d.profile), num(d.remaining) !== undefined && `${d.remaining} left`, str(d.window) && `(${d.window})`], " ")}`,
        };
      case "llm.refused":
        return { text: `model call refused: ${list([str(d.reason), str(d.message)], ": ")}`, failed: true };
      case "steward.verdict":
        return {
          text: `verdict: ${list([str(d.verdict) ?? "?", paren(str(d.trigger) ?? "")], "")}${str(d.reason) ? `: ${d.reason}` : ""}`,
        };
      case "session.ended":
        return {
          text: `ended: ${list([str(d.error) ?? "exited", paren(exitOf(d))], "")}`,
          failed: str(d.error) !== undefined && d.error !== "stopped",
        };
      default: {
        const rest = scalars(line.data);
        return { text: `${line.type}${rest ? `: ${rest}` : ""}` };
      }
    }
  }

  /** An ACP session update (plugins/acp/acp-session.ts) other than a streamed chunk. */
  private update(kind: string, u: Data): { text: string; failed?: boolean } | undefined {
    switch (kind) {
      case "tool_call": {
        const id = str(u.toolCallId);
        const title = str(u.title) ?? id ?? "?";
        if (id) this.tools.set(id, title);
        return { text: `tool: ${title}${paren(list([str(u.kind), str(u.status)]))}` };
      }
      case "tool_call_update": {
        const id = str(u.toolCallId);
        if (id && str(u.title)) this.tools.set(id, u.title);
        const title = (id && this.tools.get(id)) ?? str(u.title) ?? id ?? "?";
        return {
          text: `tool update: ${title}${paren(list([str(u.kind), str(u.status)]))}`,
          failed: u.status === "failed",
        };
      }
      case "permission_request": {
        const call = (u.toolCall ?? {}) as Data;
        const title =
          str(call.title) ?? (str(call.toolCallId) && this.tools.get(call.toolCallId)) ?? str(call.toolCallId);
        const options = Array.isArray(u.options) ? u.options.map((o: Data) => str(o?.name) ?? str(o?.optionId)) : [];
        return { text: `permission asked: ${title ?? "?"}${options.length ? ` [${list(options, " | ")}]` : ""}` };
      }
      case "permission_decision": {
        const title = str(u.toolCallId) && this.tools.get(u.toolCallId);
        const chosen = str(u.name) ?? str(u.optionId);
        return {
          text: `permission: ${chosen ? `chose ${JSON.stringify(chosen)}${paren(str(u.kind) ?? "")}` : (str(u.outcome) ?? "cancelled")}${title ? ` for ${title}` : ""}`,
        };
      }
      case "plan": {
        const entries = Array.isArray(u.entries) ? (u.entries as Data[]) : [];
        return {
          text: ["plan:", ...entries.map((e) => `  ${PLAN_MARK[e?.status] ?? "[?]"} ${String(e?.content ?? "")}`)].join(
            "\n",
          ),
        };
      }
      case "plan_update":
        return { text: `plan update${str(u.plan?.type) ? ` (${u.plan.type})` : ""}` };
      case "plan_removed":
        return { text: "plan removed" };
      case "available_commands_update": {
        const names = Array.isArray(u.availableCommands)
          ? u.availableCommands.map((c: Data) => str(c?.name) && `/${c.name}`)
          : [];
        return { text: `commands: ${list(names) || "(none)"}` };
      }
      case "current_mode_update":
        return { text: `mode: ${str(u.currentModeId) ?? "?"}` };
      case "session_info_update":
        return str(u.title) ? { text: `title: ${u.title}` } : undefined;
      case "usage_update":
        return {
          text: `context: ${num(u.used) ?? "?"} of ${num(u.size) ?? "?"} tokens${num(u.cost?.amount) !== undefined ? `, cost ${u.cost.amount} ${str(u.cost.currency) ?? ""}`.trimEnd() : ""}`,
        };
      case "notice":
        return {
          text: `notice${paren(str(u.severity) ?? "")}: ${list([str(u.title), str(u.description)], ": ")}`,
          failed: u.severity === "error",
        };
      case "fs_read_text_file":
      case "fs_write_text_file":
        return {
          text: `${kind === "fs_read_text_file" ? "read" : "wrote"} ${str(u.path) ?? "?"}${paren(
            list([num(u.bytes) !== undefined && `${u.bytes} bytes`, u.created === true && "created", str(u.error)]),
          )}`,
          failed: str(u.error) !== undefined,
        };
      default:
        return { text: `update: ${kind}` };
    }
  }
}
