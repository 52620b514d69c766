import { describe, expect, it } from "vitest";
import { recorded, redactionFor } from "../../support/redaction.js";
import {
  buildJudgeRequest,
  MAX_ENTRIES,
  MAX_TRANSCRIPT_CHARS,
  SYSTEM_PROMPT,
  VERDICT_SCHEMA,
} from "../../../core/steward/judge-request.js";
import { judgeSettings, judgeUrl } from "../../../core/steward/judge-config.js";
import { JudgeBudget } from "../../../core/steward/budget.js";
import type { TranscriptLine } from "../../../core/sessions/transcript.js";
import type { SessionDescriptor } from "../../../core/sessions/types.js";
import { resolveConfig } from "../../../core/config/resolve.js";

const session = {
  id: "ses_1",
  adapter: "echo",
  kind: "agent",
  state: "busy",
  activity: "running",
  turns: 3,
  createdAt: 0,
  lastActivityAt: 50_000,
  stalledSinceMs: 50_000,
  lastTurnErrorMessage: "no output",
  pendingPrompts: [],
  parentId: "ses_0",
  context: { pct: 81.5 },
} as unknown as SessionDescriptor;

let seq = 0;
const line = (type: string, data?: unknown): TranscriptLine => ({
  seq: ++seq,
  at: seq,
  type,
  ...(data === undefined ? {} : { data }),
});
const chunk = (text: string) =>
  line("update", {
    kind: "agent_message_chunk",
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });

describe("buildJudgeRequest", () => {
  it("is a chat-completions body: system and user messages, a json_schema response format, every string redacted", async () => {
    // The real `secrets` redaction, with one value svc holds: the whole prompt that is that value is masked.
    const r = recorded(await redactionFor("secrets", ["held-value-0123456789"]));
    const lines = [
      line("prompt", { text: `fix it with ghp_${"a".repeat(36)}`, sender: { kind: "human" } }),
      chunk("work"),
      chunk("ing"),
      line("turn.ended", { stopReason: "end_turn" }),
      line("prompt", { text: "held-value-0123456789" }),
    ];
    const { body, withheld } = buildJudgeRequest({ session, trigger: "stalled", now: 80_000, lines }, "ext-latest", r);
    expect(body).toMatchObject({
      model: "ext-latest",
      stream: false,
      max_completion_tokens: 2048,
      response_format: {
        type: "json_schema",
        json_schema: { name: "session_verdict", strict: true, schema: VERDICT_SCHEMA },
      },
    });
    const messages = body.messages as Array<{ role: string; content: string }>;
    expect(messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(messages[0]!.content).toBe(SYSTEM_PROMPT);
    const user = messages[1]!.content;
    expect(user).toContain("trigger: stalled");
    expect(user).toContain('"stalledForSec": 30');
    expect(user).toContain('"contextPct": 81.5');
    expect(user).toContain("prompt (human): fix it with [redacted]");
    expect(user).toContain("agent: working");
    expect(user).toContain("prompt (human): [redacted]");
    expect(user).not.toContain("ghp_aaaa");
    expect(user).not.toContain("held-value");
    expect(withheld).toBe(0);
    expect(r.seen.every((i) => i.surface === "judge" && i.sessionId === "ses_1")).toBe(true);
    expect(r.seen.find((i) => i.key === "session")?.content).toBe(false);
    expect(r.seen.filter((i) => i.key === "transcript").every((i) => i.content)).toBe(true);
    expect(r.seen.find((i) => i.key === "lastTurnErrorMessage")?.content).toBe(true);
  });

  it("with the metadata redactor the session's facts pass and all content is withheld", async () => {
    const { body, withheld } = buildJudgeRequest(
      { session, trigger: "request", now: 1, lines: [line("prompt", { text: "secret plans" })] },
      "m",
      await redactionFor("metadata"),
    );
    expect(JSON.stringify(body)).not.toContain("secret plans");
    expect(JSON.stringify(body)).not.toContain("no output");
    expect(JSON.stringify(body)).toContain('\\"adapter\\": \\"echo\\"');
    expect(withheld).toBe(2);
  });

  it("keeps the latest entries, at most MAX_ENTRIES and MAX_TRANSCRIPT_CHARS", async () => {
    const secrets = await redactionFor("secrets");
    const many = Array.from({ length: 100 }, (_, i) => line("prompt", { text: `p${i}` }));
    const user = (
      buildJudgeRequest({ session, trigger: "request", now: 1, lines: many }, "m", secrets).body.messages as Array<{
        content: string;
      }>
    )[1]!.content;
    expect(user).toContain("p99");
    expect(user).not.toContain("p59\n");
    expect(user).toContain(`(${MAX_ENTRIES} entries)`);
    const big = Array.from({ length: 30 }, (_, i) => line("prompt", { text: `${i}:` + "x".repeat(1900) }));
    const bigUser = (
      buildJudgeRequest({ session, trigger: "request", now: 1, lines: big }, "m", secrets).body.messages as Array<{
        content: string;
      }>
    )[1]!.content;
    expect(bigUser.length).toBeLessThan(MAX_TRANSCRIPT_CHARS + 2000);
    expect(bigUser).toContain("29:");
  });
});

describe("judgeSettings", () => {
  const settings = (file: Record<string, unknown>, env: Record<string, string> = {}) =>
    judgeSettings(resolveConfig(file, { SVC_HOME: "/tmp/h", ...env }));

  it("URL is baseUrl + /chat/completions; the model: judge.session when config sets it, else extJudge.model, else ext-latest", () => {
    expect(judgeUrl("http://127.0.0.1:9/v1/")).toBe("http://127.0.0.1:9/v1/chat/completions");
    expect(settings({})).toMatchObject({
      url: "https://judge.svc.invalid/v1/chat/completions",
      model: "ext-latest",
      windowMs: 600_000,
      timeoutMs: 30_000,
    });
    expect(settings({}).key).toBeUndefined();
    expect(settings({ extJudge: { model: "j-1", windowSec: 0, timeoutSec: 0.5 } })).toMatchObject({
      model: "j-1",
      windowMs: 0,
      timeoutMs: 500,
    });
    expect(
      settings({ extJudge: { model: "j-1" }, models: { "judge.session": { model: "j-2", route: "r" } } }),
    ).toMatchObject({ model: "j-2", route: "r" });
  });

  it("the key: extJudge.apiKey, else EXT_JUDGE_API_KEY", () => {
    expect(settings({ extJudge: { apiKey: "file-key" } }, { EXT_JUDGE_API_KEY: "env-key" }).key).toEqual({
      value: "file-key",
      from: "extJudge.apiKey",
    });
    expect(settings({}, { EXT_JUDGE_API_KEY: "env-key" }).key).toEqual({
      value: "env-key",
      from: "the daemon's EXT_JUDGE_API_KEY",
    });
  });
});

describe("JudgeBudget", () => {
  it("one judgement per session per kind per window; 0 is no limit", () => {
    const b = new JudgeBudget();
    expect(b.take("s", "stalled", 0, 1000)).toBe(true);
    expect(b.take("s", "stalled", 999, 1000)).toBe(false);
    expect(b.take("s", "turn-ended", 999, 1000)).toBe(true);
    expect(b.take("t", "stalled", 999, 1000)).toBe(true);
    expect(b.take("s", "stalled", 1000, 1000)).toBe(true);
    expect(b.take("s", "x", 0, 0) && b.take("s", "x", 0, 0)).toBe(true);
  });
});

describe("checkSteward (svc doctor)", () => {
  it("nothing with a key or on an empty home; a note once there are sessions; a warning when a judge is configured without a key", async () => {
    const { checkSteward } = await import("../../../core/steward/doctor-check.js");
    const { mkdtemp, mkdir, rm } = await import("node:fs/promises");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const home = await mkdtemp(join(tmpdir(), "svc-steward-doctor-"));
    try {
      const snap = (file: Record<string, unknown>, env: Record<string, string> = {}) =>
        resolveConfig(file, { SVC_HOME: home, ...env });
      expect(await checkSteward(snap({}))).toEqual([]);
      expect(await checkSteward(snap({ extJudge: { apiKey: "k" } }))).toEqual([]);
      expect(await checkSteward(snap({ extJudge: { model: "j" } }, { EXT_JUDGE_API_KEY: "k" }))).toEqual([]);
      expect(await checkSteward(snap({ extJudge: { model: "j" } }))).toEqual([
        expect.objectContaining({ severity: "warn", message: expect.stringContaining("no judge key") }),
      ]);
      expect(await checkSteward(snap({ models: { "judge.session": "j" } }))).toEqual([
        expect.objectContaining({ severity: "warn" }),
      ]);
      await mkdir(join(home, "sessions", "ses_1"), { recursive: true });
      expect(await checkSteward(snap({}))).toEqual([
        expect.objectContaining({ severity: "info", message: expect.stringContaining("the session steward is off") }),
      ]);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
