import { describe, expect, it } from "vitest";
import { TranscriptRenderer, clockTime, modelLine } from "../../../../core/cli/sessions/transcript-lines.js";
import type { TranscriptLine } from "../../../../core/sessions/transcript.js";

/** Local wall-clock times, so the expected HH:MM:SS holds in any time zone. */
const at = (h: number, m: number, s: number) => new Date(2026, 10, 21, h, m, s).getTime();
const T = at(9, 5, 7);
let seq = 0;
const line = (type: string, data?: unknown, when = T): TranscriptLine => ({
  seq: ++seq,
  at: when,
  type,
  ...(data === undefined ? {} : { data }),
});
const update = (kind: string, u: Record<string, unknown>, when = T) =>
  line("update", { kind, update: { sessionUpdate: kind, ...u } }, when);
const chunk = (text: string, extra: Record<string, unknown> = {}, kind = "agent_message_chunk") =>
  update(kind, { content: { type: "text", text }, ...extra });

/** All the text a fresh renderer writes for these entries, the end included. */
function render(...lines: TranscriptLine[]): string {
  const r = new TranscriptRenderer();
  return lines.map((l) => r.push(l)).join("") + r.finish();
}
const one = (l: TranscriptLine) => render(l);

describe("clockTime", () => {
  it("is HH:MM:SS in local time, zero-padded", () => {
    expect(clockTime(at(9, 5, 7))).toBe("09:05:07");
    expect(clockTime(at(23, 59, 0))).toBe("23:59:00");
  });
});

describe("the readable line of each transcript entry", () => {
  it("session.starting: adapter, source, cwd, label, parent and worktree; never its auth or options", () => {
    const text = one(
      line("session.starting", {
        adapter: "echo",
        source: "config",
        kind: "agent",
        cwd: "/work/x",
        label: "fixer",
        parentId: "ses_parent",
        options: { model: "m1", token: "opt-secret" },
        auth: { apiKey: "auth-secret" },
        worktree: { path: "/trees/x/one" },
      }),
    );
    expect(text).toBe(
      '09:05:07 starting: echo (config) in /work/x (label "fixer", child of ses_parent, worktree /trees/x/one)\n',
    );
    expect(text).not.toMatch(/secret|apiKey|token/);
  });

  it("session.started: pid, the agent's name and version, and the model it runs", () => {
    const info = {
      agent: { name: "echo-agent", version: "1.0.0" },
      model: { requested: "big", applied: true, via: "set-model", current: "big" },
    };
    expect(one(line("session.started", { pid: 4242, info }))).toBe(
      "09:05:07 started: pid 4242, echo-agent 1.0.0, model big\n",
    );
    expect(one(line("session.started", { pid: 1, info: { agent: { name: "a" } } }))).toBe(
      "09:05:07 started: pid 1, a\n",
    );
  });

  it("session.started: a model that was not applied says so, with the agent's note", () => {
    const note = "model not applied (agent default: small)";
    const info = {
      agent: { name: "a", version: "2" },
      model: { requested: "big", applied: false, current: "small", note },
    };
    expect(one(line("session.started", { pid: 7, info }))).toBe(`09:05:07 started: pid 7, a 2, model small; ${note}\n`);
    expect(modelLine({ requested: "big", applied: false })).toBe(
      "model agent default; model not applied (asked for big)",
    );
    expect(modelLine(undefined)).toBeUndefined();
  });

  it("session.started: an agent not run through the model proxy says why", () => {
    const info = { agent: { name: "a" }, modelProxy: { proxied: false, why: "no base URL setting" } };
    expect(one(line("session.started", { pid: 7, info }))).toBe(
      "09:05:07 started: pid 7, a, not through the model proxy: no base URL setting\n",
    );
  });

  it("prompt: the sender and the text, further lines indented under it", () => {
    expect(one(line("prompt", { promptId: "prm_1", sender: { kind: "human" }, text: "ping" }))).toBe(
      "09:05:07 human: ping\n",
    );
    expect(one(line("prompt", { sender: { kind: "session", id: "ses_a" }, text: "one\ntwo" }))).toBe(
      "09:05:07 session ses_a: one\n         two\n",
    );
  });

  it("prompt.received: nothing when its turn starts at once (the prompt line follows); a queued one is said", () => {
    expect(one(line("prompt.received", { promptId: "prm_1", sender: { kind: "human" }, delivery: "started" }))).toBe(
      "",
    );
    expect(one(line("prompt.received", { promptId: "prm_2", sender: { kind: "human" }, delivery: "queued" }))).toBe(
      "09:05:07 prompt queued: prm_2 from human\n",
    );
  });

  it("agent message chunks: one message's chunks on one line, as they arrive", () => {
    const r = new TranscriptRenderer();
    expect(r.push(chunk("echo"))).toBe("09:05:07 agent: echo");
    expect(r.push(chunk(": "))).toBe(": ");
    expect(r.push(chunk("ping"))).toBe("ping");
    expect(r.push(line("turn.ended", { promptId: "prm_1", stopReason: "end_turn", text: "echo: ping" }))).toBe(
      "\n09:05:07 turn ended: end_turn\n",
    );
    expect(r.finish()).toBe("");
  });

  it("agent message chunks: newlines in the text indent the next line; a new messageId starts a new line", () => {
    expect(
      render(chunk("a\nb", { messageId: "m1" }), chunk("c\n", { messageId: "m1" }), chunk("d", { messageId: "m2" })),
    ).toBe("09:05:07 agent: a\n         bc\n09:05:07 agent: d\n");
  });

  it("thought chunks are their own line, apart from the message", () => {
    expect(render(chunk("hmm", {}, "agent_thought_chunk"), chunk("yes"))).toBe(
      "09:05:07 thought: hmm\n09:05:07 agent: yes\n",
    );
  });

  it("a chunk that is not text is named, not shown", () => {
    expect(one(update("agent_message_chunk", { content: { type: "image", data: "…" } }))).toBe(
      "09:05:07 update: agent_message_chunk (image)\n",
    );
  });

  it("tool_call: title, kind, status; its updates name it by title", () => {
    expect(
      render(
        update("tool_call", { toolCallId: "t1", title: "Read README.md", kind: "read", status: "pending" }),
        update("tool_call_update", { toolCallId: "t1", status: "in_progress" }),
        update("tool_call_update", { toolCallId: "t1", status: "completed" }),
        update("tool_call_update", { toolCallId: "t9", status: "failed" }),
      ),
    ).toBe(
      [
        "09:05:07 tool: Read README.md (read, pending)",
        "09:05:07 tool update: Read README.md (in_progress)",
        "09:05:07 tool update: Read README.md (completed)",
        "09:05:07 tool update: t9 (failed)",
        "",
      ].join("\n"),
    );
  });

  it("permission_request and permission_decision: the tool, the options, the option chosen", () => {
    const toolCall = { toolCallId: "t1", title: "Write out.txt" };
    const options = [
      { optionId: "a", name: "Allow once", kind: "allow_once" },
      { optionId: "r", name: "Reject", kind: "reject_once" },
    ];
    expect(
      render(
        line("update", { kind: "permission_request", update: { toolCall, options } }),
        line("update", {
          kind: "permission_decision",
          update: { toolCallId: "t1", optionId: "a", kind: "allow_once", name: "Allow once" },
        }),
      ),
    ).toBe(
      '09:05:07 permission asked: Write out.txt [Allow once | Reject]\n09:05:07 permission: chose "Allow once" (allow_once)\n',
    );
    expect(
      one(line("update", { kind: "permission_decision", update: { toolCallId: "t2", outcome: "cancelled" } })),
    ).toBe("09:05:07 permission: cancelled\n");
  });

  it("plan: each entry on its own line with its status", () => {
    const entries = [
      { content: "read the code", priority: "high", status: "completed" },
      { content: "fix it", priority: "high", status: "in_progress" },
      { content: "test it", priority: "low", status: "pending" },
    ];
    expect(one(update("plan", { entries }))).toBe(
      "09:05:07 plan:\n           [x] read the code\n           [~] fix it\n           [ ] test it\n",
    );
  });

  it("turn.ended and turn.failed: the stop reason, and the error", () => {
    expect(one(line("turn.ended", { promptId: "p", stopReason: "cancelled", text: "" }))).toBe(
      "09:05:07 turn ended: cancelled\n",
    );
    expect(one(line("turn.failed", { promptId: "p", stopReason: "error", text: "", error: "the agent crashed" }))).toBe(
      "09:05:07 turn failed: error: the agent crashed\n",
    );
  });

  it("session.ended: the error or a plain exit, with the code and signal", () => {
    expect(one(line("session.ended", { code: null, signal: "SIGTERM", error: "stopped" }))).toBe(
      "09:05:07 ended: stopped (signal SIGTERM)\n",
    );
    expect(one(line("session.ended", { code: 0, signal: null }))).toBe("09:05:07 ended: exited (code 0)\n");
  });

  it("the daemon's own entries: stopping, stalled, verdicts, model refusals, quota", () => {
    expect(one(line("session.stopping", {}))).toBe("09:05:07 stopping\n");
    expect(one(line("session.stalled", { stalledSinceMs: 1, lastTurnErrorMessage: "upstream 503" }))).toBe(
      "09:05:07 stalled: upstream 503\n",
    );
    expect(
      one(line("steward.verdict", { verdict: "stuck", trigger: "stalled", reason: "loops", at: T, model: "j" })),
    ).toBe("09:05:07 verdict: stuck (stalled): loops\n");
    expect(one(line("llm.refused", { reason: "budget", status: 429, message: "daily budget spent" }))).toBe(
      "09:05:07 model call refused: budget: daily budget spent\n",
    );
    expect(one(line("quota", { profile: "p1", remaining: 5, window: "5h" }))).toBe("09:05:07 quota: p1 5 left (5h)\n");
    expect(one(line("prompt.stale", { promptId: "prm_3", sender: { kind: "human" }, enqueuedAt: at(9, 0, 0) }))).toBe(
      "09:05:07 prompt prm_3 from human still queued since 09:00:00\n",
    );
  });

  it("agent updates without a rendering of their own: usage, commands, files, and any other kind by name", () => {
    expect(one(update("usage_update", { used: 1200, size: 200000 }))).toBe("09:05:07 context: 1200 of 200000 tokens\n");
    expect(
      one(update("available_commands_update", { availableCommands: [{ name: "compact" }, { name: "init" }] })),
    ).toBe("09:05:07 commands: /compact, /init\n");
    expect(
      one(line("update", { kind: "fs_write_text_file", update: { path: "/w/a.txt", bytes: 12, created: true } })),
    ).toBe("09:05:07 wrote /w/a.txt (12 bytes, created)\n");
    expect(one(update("current_mode_update", { currentModeId: "plan" }))).toBe("09:05:07 mode: plan\n");
    expect(one(update("something_new", { x: 1 }))).toBe("09:05:07 update: something_new\n");
  });

  it("an entry type it does not know: its type and scalar fields, never nested data", () => {
    expect(one(line("context.warn", { model: "m", pct: 81, nested: { secretish: "x" } }))).toBe(
      '09:05:07 context.warn: model="m" pct=81\n',
    );
  });

  it("colour only when asked: a dim time, a failed turn in red", () => {
    const r = new TranscriptRenderer({ color: true });
    const out = r.push(line("turn.failed", { stopReason: "error", error: "boom" }));
    expect(out).toBe("\u001b[2m09:05:07\u001b[0m \u001b[31mturn failed: error: boom\u001b[0m\n");
  });
});
