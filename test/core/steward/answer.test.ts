import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_REASON, parseJudgeAnswer } from "../../../core/steward/answer.js";

const completion = (content: unknown) =>
  JSON.stringify({
    id: "c1",
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content } }],
  });

describe("parseJudgeAnswer", () => {
  it("reads a verdict from the first choice's JSON content", () => {
    expect(
      parseJudgeAnswer(
        completion(
          JSON.stringify({
            verdict: "stuck",
            reason: "loops on the same test",
            suggestedPrompt: "run only the failing test",
          }),
        ),
      ),
    ).toEqual({
      ok: true,
      verdict: "stuck",
      reason: "loops on the same test",
      suggestedPrompt: "run only the failing test",
    });
    expect(
      parseJudgeAnswer(completion(JSON.stringify({ verdict: "done", reason: "finished", suggestedPrompt: null }))),
    ).toEqual({ ok: true, verdict: "done", reason: "finished" });
    expect(parseJudgeAnswer(completion('```json\n{"verdict":"on_track","reason":"fine"}\n```'))).toMatchObject({
      ok: true,
      verdict: "on_track",
    });
  });

  it.each([
    ["not JSON", "<html>502</html>", /not JSON/],
    ["no choices", JSON.stringify({ error: { message: "sk-secret-echo" } }), /not a chat completion/],
    ["empty content", completion(""), /no message content/],
    ["content not JSON", completion("I think it is stuck"), /content is not JSON/],
    [
      "unknown verdict",
      completion(JSON.stringify({ verdict: "kill_it", reason: "x" })),
      /verdict: must be one of on_track, stuck, needs_human, done/,
    ],
    ["no reason", completion(JSON.stringify({ verdict: "stuck" })), /malformed at reason/],
    [
      "reason too long",
      completion(JSON.stringify({ verdict: "stuck", reason: "x".repeat(MAX_REASON + 1) })),
      /malformed at reason/,
    ],
  ])("%s is an error with a short reason that does not echo the body", (_n, body, reason) => {
    const r = parseJudgeAnswer(body);
    expect(r).toEqual({ ok: false, reason: expect.stringMatching(reason) });
    expect(JSON.stringify(r)).not.toContain("sk-secret-echo");
  });

  it("terminal escapes in the reason become spaces", () => {
    const r = parseJudgeAnswer(completion(JSON.stringify({ verdict: "stuck", reason: "a\u001b[2Jb\nc" })));
    expect(r).toMatchObject({ ok: true, reason: "a [2Jb\nc" });
  });

  it("never throws, whatever the body (property)", () => {
    const verdictish = fc.record(
      {
        verdict: fc.oneof(fc.constantFrom("on_track", "stuck", "needs_human", "done"), fc.string()),
        reason: fc.oneof(fc.string(), fc.anything()),
        suggestedPrompt: fc.anything(),
      },
      { requiredKeys: [] },
    );
    const bodies = fc.oneof(
      fc.string(),
      fc.json(),
      fc.anything().map((v) => JSON.stringify(v) ?? "undefined"),
      verdictish.map((v) => completion(JSON.stringify(v))),
      fc.anything().map((v) => completion(v)),
      fc.jsonValue().map((v) => completion(JSON.stringify(v))),
    );
    fc.assert(
      fc.property(bodies, (body) => {
        const r = parseJudgeAnswer(body);
        expect(typeof r.ok).toBe("boolean");
        if (r.ok) expect(["on_track", "stuck", "needs_human", "done"]).toContain(r.verdict);
        else expect(r.reason.length).toBeLessThan(300);
      }),
      { numRuns: 2000 },
    );
  });
});
